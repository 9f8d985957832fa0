"""The pipecat eval wire against a scripted stand-in bot (a real WebSocket server on loopback):
what the lab sends, how the bot's RTVI reports become outputs, and every failure of the far
side an AgentFault, never a raise or a hang. The real pipecat bot: test_pipecat_scenarios.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.server import ServerConnection, serve

from lab.connectors.interface import (
    AgentFault,
    AgentOutput,
    CallerTurn,
    Said,
    ToolObserved,
    TurnFinished,
)
from lab.connectors.pipecat_eval import PipecatEvalAgent, connect
from lab.connectors.registry import ConnectorUnavailable, check_connector, parse_spec
from lab.connectors.tool_specs import TOOL_SPECS
from tests.conftest import ROOT
from tests.connectors.conftest import free_port
from tests.connectors.toolbox import FixtureToolBox

NO_HANG_S = 15.0  # far above every limit set below, so only a hang reaches it
Bot = Callable[[ServerConnection, list[dict[str, Any]]], Awaitable[None]]
RESULT = {"kind": "ok", "content": {"options": [{"slot_id": "tue-1500", "time": "15:00"}]}}


def rtvi(kind: str, data: dict[str, Any] | None = None) -> str:
    return json.dumps({"label": "rtvi-ai", "type": kind, "data": data})


async def handshake(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    """As pipecat's runner and RTVIProcessor do: eval-connect, then bot-ready on client-ready."""
    for _ in range(2):
        heard.append(json.loads(await ws.recv()))
    await ws.send(rtvi("bot-ready", {"version": "2.2.0", "about": {"library": "pipecat-ai"}}))


async def next_turn(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    while (message := json.loads(await ws.recv()))["type"] != "send-text":
        heard.append(message)
    heard.append(message)


async def well_behaved(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    """One reply as pipecat 1.14 reports it: a call between two LLM responses."""
    await handshake(ws, heard)
    await next_turn(ws, heard)
    call = {"tool_call_id": "call_1", "function_name": "check_availability"}
    for message in [
        rtvi("bot-interrupted"),
        rtvi("bot-llm-started"),
        rtvi("bot-llm-text", {"text": "Let me"}),
        rtvi("bot-llm-text", {"text": " check. "}),
        rtvi("llm-function-call-started", {"function_name": "check_availability"}),
        rtvi("bot-llm-stopped"),
        rtvi("llm-function-call-in-progress", call | {"arguments": {"day": "tuesday"}}),
        rtvi("llm-function-call-stopped", call | {"cancelled": False, "result": RESULT}),
        rtvi("bot-llm-started"),
        rtvi("bot-llm-text", {"text": "I have Tuesday at 3:00 PM. Shall I"}),
        rtvi("bot-llm-text", {"text": " book it?"}),
        rtvi("bot-llm-stopped"),
    ]:
        await ws.send(message)
    await ws.wait_closed()


async def silent(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await ws.wait_closed()


async def garbage(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await handshake(ws, heard)
    await next_turn(ws, heard)
    await ws.send("{this is not json")
    await ws.wait_closed()


async def hangs_up(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await handshake(ws, heard)
    await next_turn(ws, heard)
    await ws.send(rtvi("bot-llm-started"))
    await ws.close()


async def stalls(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await handshake(ws, heard)
    await next_turn(ws, heard)
    await ws.send(rtvi("bot-llm-started"))
    await ws.wait_closed()


async def errs(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await handshake(ws, heard)
    await next_turn(ws, heard)
    await ws.send(rtvi("error", {"error": "the LLM service is down", "fatal": True}))
    await ws.wait_closed()


async def outputs(stream: AsyncIterator[AgentOutput]) -> list[AgentOutput]:
    async with asyncio.timeout(NO_HANG_S):
        return [output async for output in stream]


async def talk(
    bot: Bot,
    timeout_s: float = 20.0,
    handshake_timeout_s: float = 15.0,
    *,
    always_hear: bool = False,
    max_turn_bytes: int = 16 << 20,
) -> tuple[list[AgentOutput], list[dict[str, Any]]]:
    """Greet and one caller turn against the stand-in bot (always_hear: even after a failed
    greeting, as a run goes on); what came out, what the bot heard."""
    heard: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection) -> None:
        await bot(ws, heard)

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        agent = PipecatEvalAgent(
            url=f"ws://127.0.0.1:{port}/ws",
            settle_s=0.0,
            timeout_s=timeout_s,
            handshake_timeout_s=handshake_timeout_s,
            max_turn_bytes=max_turn_bytes,
        )
        got = await outputs(agent.greet(FixtureToolBox()))
        if got == [TurnFinished()] or always_hear:
            turn = CallerTurn(text="Tuesday afternoon, please.", utterance_event_id="ev-00002")
            got += await outputs(agent.hear(turn, FixtureToolBox()))
        await agent.close()
    return got, heard


async def test_the_lab_speaks_the_harness_wire_and_reads_a_reply_with_an_observed_call() -> None:
    got, heard = await talk(well_behaved)
    assert got == [
        TurnFinished(),
        Said("Let me check."),
        ToolObserved(
            call=got[2].call,  # type: ignore[union-attr]
            result=RESULT,
        ),
        Said("I have Tuesday at 3:00 PM."),
        Said("Shall I book it?"),
        TurnFinished(),
    ]
    observed = got[2]
    assert isinstance(observed, ToolObserved)
    assert (observed.call.call_id, observed.call.name) == ("call_1", "check_availability")
    assert observed.call.arguments == {"day": "tuesday"}
    connect_message, ready, configure, send_text = heard[:4]
    assert connect_message["data"] == {
        "t": "eval-connect",
        "d": {"skip_tts": True, "capture_bot_audio": False, "capture_bot_images": False},
    }
    assert ready["type"] == "client-ready" and ready["data"]["version"] == "2.2.0"
    assert configure["data"] == {
        "t": "eval-configure",
        "d": {"function_call_report_level": {"*": "full"}},
    }
    assert send_text["type"] == "send-text"
    assert send_text["data"] == {
        "content": "Tuesday afternoon, please.",
        "options": {"run_immediately": True, "audio_response": False},
    }
    assert all(message["label"] == "rtvi-ai" for message in heard)


async def test_a_refused_connection_is_a_disconnected_fault() -> None:
    agent = PipecatEvalAgent(url=f"ws://127.0.0.1:{free_port()}/ws", handshake_timeout_s=5)
    (fault,) = await outputs(agent.greet(FixtureToolBox()))
    assert isinstance(fault, AgentFault) and fault.kind == "disconnected"
    assert "could not reach the bot" in fault.reason
    await agent.close()


@pytest.mark.parametrize(
    ("bot", "kind", "says"),
    [
        (garbage, "malformed", "non-JSON"),
        (hangs_up, "disconnected", "closed the connection mid-turn"),
        (stalls, "timeout", "did not finish its turn within 0.3 s"),
        (errs, "malformed", "the LLM service is down"),
    ],
    ids=["garbage", "hangs-up", "stalls", "errs"],
)
async def test_a_misbehaving_bot_mid_turn_is_the_right_fault_never_a_hang(
    bot: Bot, kind: str, says: str
) -> None:
    got, _ = await talk(bot, timeout_s=0.3)
    assert got[0] == TurnFinished()
    fault = got[-1]
    assert isinstance(fault, AgentFault) and fault.kind == kind, got
    assert says in fault.reason


async def test_a_bot_that_never_says_ready_is_a_handshake_timeout() -> None:
    got, _ = await talk(silent, handshake_timeout_s=0.3)
    (fault,) = got
    assert isinstance(fault, AgentFault) and fault.kind == "timeout"
    assert "no bot-ready within 0.3 s" in fault.reason


async def flood(ws: ServerConnection, chunk: str = "x", pause_s: float = 0.005) -> None:
    """Valid RTVI frames, without end, until the lab goes."""
    frame = rtvi("bot-llm-text", {"text": chunk})
    while True:
        await ws.send(frame)
        await asyncio.sleep(pause_s)


async def floods_instead_of_ready(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await flood(ws)


async def floods_mid_turn(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await handshake(ws, heard)
    await next_turn(ws, heard)
    await ws.send(rtvi("bot-llm-started"))
    await flood(ws)


async def floods_fast_mid_turn(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await handshake(ws, heard)
    await next_turn(ws, heard)
    await ws.send(rtvi("bot-llm-started"))
    await flood(ws, "x" * 60_000, pause_s=0)


async def sends_a_huge_frame(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    await handshake(ws, heard)
    await next_turn(ws, heard)
    await ws.send(rtvi("bot-llm-text", {"text": "x" * (2 << 20)}))
    await ws.wait_closed()


async def test_a_bot_that_floods_instead_of_ready_is_cut_off_at_the_handshake_deadline() -> None:
    """The limit is a deadline over the handshake, and the bot is not read on after it."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    got, _ = await talk(
        floods_instead_of_ready, timeout_s=5.0, handshake_timeout_s=0.5, always_hear=True
    )
    assert loop.time() - started < 3.0
    handshake_fault, turn_fault = got
    assert isinstance(handshake_fault, AgentFault) and handshake_fault.kind == "timeout"
    assert "no bot-ready within 0.5 s" in handshake_fault.reason
    # The next turn is not sent to a bot whose handshake failed, nor waited on.
    assert turn_fault == AgentFault("disconnected", "the bot is not connected")


async def test_a_bot_that_floods_mid_turn_is_held_to_the_turn_deadline() -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    got, _ = await talk(floods_mid_turn, timeout_s=0.5)
    assert loop.time() - started < 3.0
    fault = got[-1]
    assert isinstance(fault, AgentFault) and fault.kind == "timeout", got
    assert "did not finish its turn within 0.5 s" in fault.reason


@pytest.mark.parametrize(
    ("bot", "says"),
    [
        (sends_a_huge_frame, "one message from the bot passed 1 MiB"),
        (floods_fast_mid_turn, "the bot's turn passed 2 MiB"),
    ],
    ids=["frame", "turn"],
)
async def test_a_bot_that_sends_past_a_cap_is_an_oversize_fault(bot: Bot, says: str) -> None:
    got, _ = await talk(bot, timeout_s=10.0, max_turn_bytes=2 << 20)
    fault = got[-1]
    assert isinstance(fault, AgentFault) and fault.kind == "oversize", got
    assert says in fault.reason


def test_the_registry_reaches_a_pipecat_bot_and_its_identity_hides_tokens() -> None:
    spec = parse_spec("pipecat:ws://user:secret@127.0.0.1:7860/ws?token=abc")
    check_connector(spec)
    agent = connect(spec)
    assert agent.identity.connector == "pipecat"
    assert agent.identity.endpoint == "ws://127.0.0.1:7860/ws"
    assert agent.identity.tools_observed_only
    with pytest.raises(ConnectorUnavailable, match="not a ws:// or wss:// URL"):
        connect(parse_spec("pipecat:http://127.0.0.1:7860/ws"))


def test_the_reference_bot_offers_exactly_the_labs_tool_definitions() -> None:
    shipped = json.loads((ROOT / "agents" / "pipecat_bot" / "tools.json").read_text())
    assert shipped == [spec.openai_function() for spec in TOOL_SPECS.values()]


def echo(message: dict[str, Any]) -> str:
    """The bot's user-input echo of a send-text, as pipecat 1.14's RTVIObserver sends it."""
    text = message["data"]["content"]
    return rtvi(
        "user-input", {"text": text, "input_type": "chat", "final": True, "msg_id": message["id"]}
    )


async def late_greeter(ws: ServerConnection, heard: list[dict[str, Any]]) -> None:
    """Echoes each turn; the second turn's echo comes after an earlier reply's tail."""
    await handshake(ws, heard)
    await next_turn(ws, heard)
    for message in [echo(heard[-1]), rtvi("bot-llm-started")]:
        await ws.send(message)
    for message in [rtvi("bot-llm-text", {"text": "First answer."}), rtvi("bot-llm-stopped")]:
        await ws.send(message)
    await next_turn(ws, heard)
    for message in [
        rtvi("bot-llm-text", {"text": "Hello, and welcome to the line."}),
        rtvi("bot-llm-stopped"),
        echo(heard[-1]),
        rtvi("bot-llm-started"),
        rtvi("bot-llm-text", {"text": "Second answer."}),
        rtvi("bot-llm-stopped"),
    ]:
        await ws.send(message)
    await ws.wait_closed()


async def test_what_a_bot_says_before_echoing_the_turn_is_not_the_turns_reply() -> None:
    heard: list[dict[str, Any]] = []

    async def handler(ws: ServerConnection) -> None:
        await late_greeter(ws, heard)

    async with serve(handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        agent = PipecatEvalAgent(url=f"ws://127.0.0.1:{port}/ws", settle_s=0.0)
        assert await outputs(agent.greet(FixtureToolBox())) == [TurnFinished()]
        replies = []
        for text in ("First.", "Second."):
            turn = CallerTurn(text=text, utterance_event_id="ev-00002")
            replies.append(await outputs(agent.hear(turn, FixtureToolBox())))
        await agent.close()
    assert replies == [
        [Said("First answer."), TurnFinished()],
        [Said("Second answer."), TurnFinished()],
    ]
