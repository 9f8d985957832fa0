"""A misbehaving Chat Completions server: every failure becomes the right AgentFault, never a
raise and never a hang. The server is a tiny real HTTP server on loopback, one habit per path.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from lab.connectors.interface import (
    AgentFault,
    AgentOutput,
    CallerTurn,
    Said,
    ToolCalled,
    TurnFinished,
)
from lab.connectors.openai_chat import OpenAIChatAgent, connect
from lab.connectors.registry import AgentSpec
from lab.connectors.tool_specs import offered_specs
from lab.events.types import Action
from tests.connectors.toolbox import FixtureToolBox

CALENDAR = offered_specs(frozenset({Action.BOOK}))
NO_HANG_S = 15.0  # far above every limit set below, so only a hang reaches it


def _completion(message: dict[str, object]) -> bytes:
    body = {"model": "bad-model", "choices": [{"index": 0, "message": message}]}
    return json.dumps(body).encode()


_TOOL_CALL: dict[str, object] = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "check_availability", "arguments": '{"day": "tuesday"}'},
        }
    ],
}
_ANSWERS: dict[str, tuple[int, str, bytes]] = {
    "error": (500, "text/plain", b"upstream exploded: model not loaded"),
    "garbage": (200, "application/json", b"{not json at all"),
    "no-choices": (200, "application/json", b'{"model": "m", "choices": []}'),
    "garbage-stream": (200, "text/event-stream", b"data: {oops\n\n"),
    "bad-arguments": (
        200,
        "application/json",
        _completion(
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "function": {"name": "check_availability", "arguments": "{day:"}}
                ],
            }
        ),
    ),
    "always-tools": (200, "application/json", _completion(_TOOL_CALL)),
    "fine": (200, "application/json", _completion({"role": "assistant", "content": "Hi there."})),
    "silent": (200, "application/json", _completion({"role": "assistant", "content": ""})),
    "length": (
        200,
        "application/json",
        json.dumps(
            {
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "I have Tuesday. Shall I"},
                        "finish_reason": "length",
                    }
                ],
            }
        ).encode(),
    ),
}


def _delta(text: str) -> bytes:
    chunk = {"model": "m", "choices": [{"index": 0, "delta": {"content": text}}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


_JSON_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
_SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
# habit: (head, start, what follows for ever)
_ENDLESS: dict[str, tuple[bytes, bytes, bytes]] = {
    "endless-json": (_JSON_HEAD, b'{"choices": [{"message": {"content": "', b"a" * 65536),
    "endless-line": (_SSE_HEAD, b'data: {"choices": [{"delta": {"content": "', b"a" * 65536),
    "endless-stream": (_SSE_HEAD, b"", _delta("Still talking. ") * 200),
    "endless-error": (
        b"HTTP/1.1 500 X\r\nContent-Type: text/plain\r\n\r\n",
        b"upstream exploded ",
        b"x" * 65536,
    ),
}


@dataclass
class BadServer:
    port: int = 0
    headers: list[dict[str, str]] = field(default_factory=list)
    released: asyncio.Event = field(default_factory=asyncio.Event)

    def url(self, habit: str) -> str:
        return f"http://127.0.0.1:{self.port}/{habit}/v1"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            headers = {}
            while (header := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = header.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            await reader.readexactly(int(headers.get("content-length", "0")))
            self.headers.append(headers)
            habit = line.decode().split()[1].split("/")[1]
            if habit == "hang":
                await self.released.wait()
            elif habit == "two-sentences":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
                for text in ("One sentence. ", "And another."):
                    chunk = {"model": "m", "choices": [{"index": 0, "delta": {"content": text}}]}
                    writer.write(f"data: {json.dumps(chunk)}\n\n".encode())
                writer.write(b"data: [DONE]\n\n")
                await writer.drain()
            elif habit in _ENDLESS:
                # Sends without end, fast, until the lab hangs up.
                head, start, filler = _ENDLESS[habit]
                writer.write(head + start)
                while not self.released.is_set():
                    writer.write(filler)
                    await writer.drain()
            elif habit == "length-stream":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
                writer.write(_delta("I have Tuesday at 9:30 AM. Shall I"))
                last = {
                    "model": "m",
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}],
                }
                writer.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
                await writer.drain()
            elif habit in ("cut-stream", "reset-stream"):
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
                for text in ("I have Tuesday at 9:30 AM. ", "Shall I"):
                    writer.write(_delta(text))
                await writer.drain()
                if habit == "reset-stream":
                    # SO_LINGER 0: the close is a reset (RST), as a crashed server's is.
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
            elif habit == "cut-body":
                body = _completion({"role": "assistant", "content": "I have Tuesday. Shall I"})
                writer.write(
                    f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(body) + 500}\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
            elif habit == "trickle":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
                while not self.released.is_set():
                    writer.write(b": still thinking\n\n")
                    await writer.drain()
                    await asyncio.sleep(0.05)
            else:
                status, kind, body = _ANSWERS[habit]
                writer.write(
                    f"HTTP/1.1 {status} X\r\nContent-Type: {kind}\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def bad_server() -> AsyncIterator[BadServer]:
    server = BadServer()
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    try:
        yield server
    finally:
        server.released.set()
        listener.close()
        await listener.wait_closed()


async def _hear(agent: OpenAIChatAgent, box: FixtureToolBox) -> list[AgentOutput]:
    try:
        async with asyncio.timeout(NO_HANG_S):
            return [o async for o in agent.hear(CallerTurn("Tuesday, please.", "ev-1"), box)]
    finally:
        await agent.close()


def _agent(
    url: str, *, stream: bool = False, timeout_s: float = 20.0, deadline_s: float | None = None
) -> OpenAIChatAgent:
    return OpenAIChatAgent(
        base_url=url,
        model="m",
        tools=CALENDAR,
        stream=stream,
        timeout_s=timeout_s,
        deadline_s=deadline_s,
    )


@pytest.mark.parametrize("stream", [False, True])
async def test_a_server_error_is_an_http_error_fault_with_status_and_excerpt(
    bad_server: BadServer, stream: bool
) -> None:
    outputs = await _hear(_agent(bad_server.url("error"), stream=stream), FixtureToolBox())
    (fault,) = outputs
    assert isinstance(fault, AgentFault) and fault.kind == "http_error"
    assert "500" in fault.reason and "model not loaded" in fault.reason


async def test_a_server_that_hangs_is_a_timeout_fault(bad_server: BadServer) -> None:
    outputs = await _hear(_agent(bad_server.url("hang"), timeout_s=0.3), FixtureToolBox())
    assert [type(o) for o in outputs] == [AgentFault]
    assert isinstance(outputs[0], AgentFault) and outputs[0].kind == "timeout"


async def test_a_stream_that_never_finishes_is_a_timeout_fault(bad_server: BadServer) -> None:
    # Each read arrives within the read timeout; the deadline on the whole request stops it.
    agent = _agent(bad_server.url("trickle"), stream=True, timeout_s=5, deadline_s=0.5)
    outputs = await _hear(agent, FixtureToolBox())
    assert [type(o) for o in outputs] == [AgentFault]
    assert isinstance(outputs[0], AgentFault) and outputs[0].kind == "timeout"


async def test_the_request_limit_is_a_deadline_over_the_whole_reply(bad_server: BadServer) -> None:
    # Keep-alive comments arrive well within the limit, each one; the reply never does.
    loop = asyncio.get_running_loop()
    started = loop.time()
    outputs = await _hear(
        _agent(bad_server.url("trickle"), stream=True, timeout_s=0.5), FixtureToolBox()
    )
    assert loop.time() - started < 3.0
    (fault,) = outputs
    assert isinstance(fault, AgentFault) and fault.kind == "timeout"
    assert "no complete reply within the 0.5 s limit" in fault.reason


async def test_time_the_lab_spends_between_sentences_is_not_the_servers(
    bad_server: BadServer,
) -> None:
    agent = _agent(bad_server.url("two-sentences"), stream=True, deadline_s=0.3)
    outputs: list[AgentOutput] = []
    try:
        async with asyncio.timeout(NO_HANG_S):
            async for output in agent.hear(CallerTurn("Hello?", "ev-1"), FixtureToolBox()):
                outputs.append(output)
                if isinstance(output, Said):
                    await asyncio.sleep(0.4)  # the lab speaking: longer than the whole deadline
    finally:
        await agent.close()
    assert outputs == [Said("One sentence."), Said("And another."), TurnFinished()]


@pytest.mark.parametrize(
    ("habit", "stream", "names"),
    [
        ("garbage", False, "not a Chat Completions object"),
        ("no-choices", False, "no choices"),
        ("garbage-stream", True, "not a Chat Completions object"),
        ("bad-arguments", False, "arguments are not JSON"),
    ],
)
async def test_a_malformed_reply_is_a_malformed_fault(
    bad_server: BadServer, habit: str, stream: bool, names: str
) -> None:
    box = FixtureToolBox()
    outputs = await _hear(_agent(bad_server.url(habit), stream=stream), box)
    (fault,) = outputs
    assert isinstance(fault, AgentFault) and fault.kind == "malformed"
    assert names in fault.reason
    assert box.calls == []  # a call whose arguments could not be read never reaches the tools


async def test_a_model_that_only_calls_tools_is_stopped_after_the_round_cap(
    bad_server: BadServer,
) -> None:
    box = FixtureToolBox()
    outputs = await _hear(_agent(bad_server.url("always-tools")), box)
    # Six rounds of tools run; the seventh request for more is the fault, and is not run.
    assert [type(o) for o in outputs] == [ToolCalled] * 6 + [AgentFault]
    fault = outputs[-1]
    assert isinstance(fault, AgentFault) and fault.kind == "malformed"
    assert len(box.calls) == 6


async def test_a_refused_connection_is_a_disconnected_fault() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: the connection is refused
        outputs = await _hear(_agent(f"http://127.0.0.1:{port}/v1"), FixtureToolBox())
    (fault,) = outputs
    assert isinstance(fault, AgentFault) and fault.kind == "disconnected"


async def test_the_api_key_goes_as_a_bearer_token_only_when_the_spec_carries_one(
    bad_server: BadServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The operator's own key sits in the environment: a spec without a key must not pick it up.
    monkeypatch.setenv("LAB_AGENT_API_KEY", "the-labs-own-key")
    keyed = connect(AgentSpec(connector="openai", endpoint=bad_server.url("fine"), api_key="k-1"))
    outputs = await _hear(keyed, FixtureToolBox())
    assert outputs == [Said("Hi there."), TurnFinished()]
    assert bad_server.headers[-1]["authorization"] == "Bearer k-1"
    assert "k-1" not in keyed.identity.model_dump_json()
    keyless = connect(AgentSpec(connector="openai", endpoint=bad_server.url("fine")))
    assert await _hear(keyless, FixtureToolBox()) == [Said("Hi there."), TurnFinished()]
    assert "authorization" not in bad_server.headers[-1]
    assert "the-labs-own-key" not in json.dumps(bad_server.headers)


async def test_a_greeting_may_be_empty_and_without_a_system_prompt_asks_nothing(
    bad_server: BadServer,
) -> None:
    box = FixtureToolBox()
    prompted = OpenAIChatAgent(
        base_url=bad_server.url("silent"), model="m", tools=CALENDAR, system_prompt="Greet."
    )
    bare = OpenAIChatAgent(base_url=bad_server.url("fine"), model="m", tools=CALENDAR)
    try:
        async with asyncio.timeout(NO_HANG_S):
            assert [o async for o in prompted.greet(box)] == [TurnFinished()]
            assert len(bad_server.headers) == 1  # the prompted agent was asked, and said nothing
            assert [o async for o in bare.greet(box)] == [TurnFinished()]
            assert len(bad_server.headers) == 1  # nothing to answer yet: no request at all
    finally:
        await prompted.close()
        await bare.close()


async def test_identify_keeps_the_asked_model_when_the_server_cannot_say(
    bad_server: BadServer,
) -> None:
    for habit in ("hang", "error", "garbage"):
        agent = _agent(bad_server.url(habit), timeout_s=0.3)
        try:
            async with asyncio.timeout(NO_HANG_S):
                await agent.identify()
        finally:
            await agent.close()
        assert agent.identity.model == "m"


@pytest.mark.parametrize(
    ("habit", "stream", "what"),
    [
        ("endless-json", False, "the reply's body passed 1 MiB"),
        ("endless-line", True, "one line of the streamed reply passed 256 KiB"),
        ("endless-stream", True, "the streamed reply passed 1 MiB"),
    ],
)
async def test_a_reply_past_its_cap_is_an_oversize_fault_and_is_not_read_on(
    bad_server: BadServer, habit: str, stream: bool, what: str
) -> None:
    outputs = await _hear(_agent(bad_server.url(habit), stream=stream), FixtureToolBox())
    fault = outputs[-1]
    assert isinstance(fault, AgentFault) and fault.kind == "oversize"
    assert what in fault.reason
    assert not any(isinstance(o, TurnFinished) for o in outputs)


@pytest.mark.parametrize("stream", [False, True])
async def test_an_endless_error_body_is_read_only_as_far_as_its_excerpt(
    bad_server: BadServer, stream: bool
) -> None:
    outputs = await _hear(_agent(bad_server.url("endless-error"), stream=stream), FixtureToolBox())
    (fault,) = outputs
    assert isinstance(fault, AgentFault) and fault.kind == "http_error"
    assert "500" in fault.reason and "upstream exploded" in fault.reason


async def test_a_stream_closed_before_done_is_a_truncated_fault_and_its_tail_is_not_said(
    bad_server: BadServer,
) -> None:
    outputs = await _hear(_agent(bad_server.url("cut-stream"), stream=True), FixtureToolBox())
    assert outputs[:-1] == [Said("I have Tuesday at 9:30 AM.")]  # never the dangling "Shall I"
    fault = outputs[-1]
    assert isinstance(fault, AgentFault) and fault.kind == "truncated"
    assert "ended without data: [DONE] after 2 chunks" in fault.reason


async def test_a_reset_mid_stream_says_what_happened(bad_server: BadServer) -> None:
    outputs = await _hear(_agent(bad_server.url("reset-stream"), stream=True), FixtureToolBox())
    fault = outputs[-1]
    assert isinstance(fault, AgentFault) and fault.kind == "truncated"
    assert "the connection broke after" in fault.reason
    assert "reset" in fault.reason.lower()  # ConnectionResetError's words, not "ReadError: "
    assert not any(isinstance(o, TurnFinished) for o in outputs)


async def test_a_whole_body_cut_short_is_a_truncated_fault(bad_server: BadServer) -> None:
    outputs = await _hear(_agent(bad_server.url("cut-body")), FixtureToolBox())
    (fault,) = outputs
    assert isinstance(fault, AgentFault) and fault.kind == "truncated"
    assert "without sending complete message body" in fault.reason


@pytest.mark.parametrize(("habit", "stream"), [("length", False), ("length-stream", True)])
async def test_a_reply_stopped_at_the_token_limit_is_a_truncated_fault(
    bad_server: BadServer, habit: str, stream: bool
) -> None:
    outputs = await _hear(_agent(bad_server.url(habit), stream=stream), FixtureToolBox())
    fault = outputs[-1]
    assert isinstance(fault, AgentFault) and fault.kind == "truncated"
    assert "finish_reason: length" in fault.reason
    assert Said("Shall I") not in outputs
