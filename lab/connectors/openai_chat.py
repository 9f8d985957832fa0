"""An LLM agent behind any OpenAI-compatible Chat Completions endpoint, as an agent under test.

The lab runs the loop pipecat and LiveKit run around an LLM: caller turns go in as user
messages, the offered sandbox tools as function definitions, each tool call through the lab's
ToolBox (the gate in guarded runs) and back as a tool message, until the model answers in
words. A thin shell over `chat_wire`; every failure of the far side becomes an AgentFault.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from lab.connectors.bounded import Oversize, size, why
from lab.connectors.chat_wire import (
    AssistantReply,
    Malformed,
    Message,
    Sentences,
    StreamReader,
    keep_heard,
    knowledge_message,
    late_result_message,
    pending_message,
    read_reply,
    split_sentences,
    tool_message,
)
from lab.connectors.http_body import BoundedBody, RequestBudget
from lab.connectors.interface import (
    AgentFault,
    AgentIdentity,
    AgentOutput,
    CallerTurn,
    Said,
    ToolBox,
    ToolCall,
    ToolCalled,
    TurnFinished,
)
from lab.connectors.pinning import pinned_transport
from lab.connectors.registry import AgentSpec, ConnectorUnavailable
from lab.connectors.tool_specs import TOOL_SPECS, ToolSpec, tools_digest
from lab.events.chain import digest

MAX_TOOL_ROUNDS = 6
_BODY_EXCERPT = 200
# How a run's connector is tuned from the environment (the spec holds only what a run records).
SYSTEM_PROMPT_FILE_ENV = "LAB_AGENT_SYSTEM_PROMPT_FILE"
STREAM_ENV = "LAB_AGENT_STREAM"
TIMEOUT_ENV = "LAB_AGENT_REQUEST_TIMEOUT_S"


def connect(spec: AgentSpec) -> OpenAIChatAgent:
    """The registry's factory: `openai:URL --model NAME`, offering the run's tools."""
    names = spec.tools or tuple(TOOL_SPECS)
    prompt_file = os.environ.get(SYSTEM_PROMPT_FILE_ENV)
    timeout = os.environ.get(TIMEOUT_ENV, "20")
    try:
        system_prompt = Path(prompt_file).read_text() if prompt_file else None
        timeout_s = float(timeout)
    except OSError as error:
        raise ConnectorUnavailable(f"{SYSTEM_PROMPT_FILE_ENV}: {error}") from None
    except ValueError:
        raise ConnectorUnavailable(f"{TIMEOUT_ENV}={timeout!r} is not seconds") from None
    return OpenAIChatAgent(
        base_url=spec.endpoint,
        model=spec.model or "default",
        tools=[TOOL_SPECS[name] for name in names if name in TOOL_SPECS],
        own_tools=spec.toolset.functions() if spec.toolset else None,
        system_prompt=system_prompt,
        stream=os.environ.get(STREAM_ENV, "1") != "0",
        timeout_s=timeout_s,
        api_key=spec.api_key,
        transport=pinned_transport(spec.resolve) if spec.resolve else None,
    )


def public_endpoint(base_url: str) -> str:
    """The endpoint as reports show it: no user, password or query (where keys hide)."""
    url = httpx.URL(base_url)
    return str(url.copy_with(username=None, password=None, query=None, fragment=None))


class OpenAIChatAgent:
    """One conversation with a chat model; the history lives here, the server is stateless."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        tools: list[ToolSpec],
        own_tools: list[dict[str, Any]] | None = None,
        system_prompt: str | None = None,
        stream: bool = True,
        timeout_s: float = 20.0,
        connect_timeout_s: float = 5.0,
        deadline_s: float | None = None,
        api_key: str | None = None,
        max_tool_rounds: int = MAX_TOOL_ROUNDS,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.model = model
        self.stream = stream
        self.max_tool_rounds = max_tool_rounds
        # The request's limit is a deadline over all of it (by default timeout_s, as
        # LAB_AGENT_REQUEST_TIMEOUT_S promises), so a server that trickles is held to it too;
        # the read timeout within it only names a server that went silent sooner.
        self.deadline_s = timeout_s if deadline_s is None else deadline_s
        # The agent's own definitions (its tools file) as they are, else the lab's tools.
        self.functions = own_tools or [spec.openai_function() for spec in tools]
        self.messages: list[Message] = []
        # Caller turns heard while a tool call runs, each with the future its answer settles.
        self._interjections: asyncio.Queue[tuple[CallerTurn, asyncio.Future[None]]] = (
            asyncio.Queue()
        )
        if system_prompt:
            self.messages.append({"role": "system", "content": system_prompt})
        self.identity = AgentIdentity(
            connector="openai",
            endpoint=public_endpoint(base_url),
            model=model,
            tools_digest=digest(own_tools) if own_tools else tools_digest(tools),
            system_prompt_digest=(
                hashlib.sha256(system_prompt.encode()).hexdigest() if system_prompt else None
            ),
        )
        # Identity encoding: the caps count what the server sent, not what a decoder inflated.
        headers = {
            "Accept": "text/event-stream" if stream else "application/json",
            "Accept-Encoding": "identity",
        }
        # Only the key the run's spec carries: whose key an agent may get is the session's
        # decision (a tenant's own variable, or the shell's LAB_AGENT_API_KEY), never a default.
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            transport=transport,
            follow_redirects=False,
            trust_env=False,
        )
        self._timeout_s = timeout_s

    async def greet(self, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        """The agent's opening turn; with no system prompt there is nothing to answer yet."""
        if not self.messages:
            yield TurnFinished()
            return
        async for output in self._turn(tools):
            yield output

    async def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        self._user(turn)
        async for output in self._turn(tools):
            yield output

    async def interject(self, turn: CallerTurn) -> None:
        """The caller spoke while a tool call of this turn runs: the turn answers them (its
        last call still running) and this returns once it has."""
        answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._interjections.put_nowait((turn, answered))
        await answered

    def _user(self, turn: CallerTurn) -> None:
        keep_heard(self.messages, turn.cut)
        if turn.knowledge is not None:
            self.messages.append(knowledge_message(turn.knowledge))
        self.messages.append({"role": "user", "content": turn.text})

    async def close(self) -> None:
        await self._client.aclose()

    async def identify(self) -> None:
        """The model the server names before any reply: the one asked for if it lists it, else
        the only one it serves (vLLM and llama.cpp answer any name with theirs)."""
        try:
            async with asyncio.timeout(self._timeout_s):
                request = self._client.build_request("GET", "models")
                response = await self._client.send(request, stream=True)
                try:
                    body = await BoundedBody(response).whole()
                finally:
                    await response.aclose()
            listed = _Models.model_validate_json(body).data
        except (httpx.HTTPError, TimeoutError, ValidationError, Oversize):
            return  # the first request says what is wrong, as a fault of the turn
        names = {model.id for model in listed}
        if self.model not in names and len(names) == 1:
            self._reported(names.pop())

    async def _turn(self, tools: ToolBox, *, listen: bool = True) -> AsyncIterator[AgentOutput]:
        """Request, run the asked tools, request again, until the model answers in words; a
        caller heard meanwhile (listen) is answered within it."""
        owed: list[asyncio.Future[None]] = []
        try:
            for rounds in itertools.count():
                reply = AssistantReply()
                async for output in self._request(reply):
                    yield output
                self._reported(reply.model)
                if reply.calls and rounds == self.max_tool_rounds:
                    yield AgentFault(
                        "malformed",
                        f"the model asked for tools again after {rounds} rounds without answering",
                    )
                    return
                self.messages.append(reply.message())
                if not reply.calls and listen and not self._interjections.empty():
                    # Heard while a call ran that was not the reply's last: answered now.
                    turn, answered = self._interjections.get_nowait()
                    owed.append(answered)
                    self._user(turn)
                    continue
                if not reply.calls:
                    yield TurnFinished()
                    return
                for number, call in enumerate(reply.calls):
                    if listen and number == len(reply.calls) - 1:
                        async for heard in self._call_hearing(call, tools):
                            yield heard
                        continue
                    result = await tools.call(call)
                    self.messages.append(tool_message(result))
                    yield ToolCalled(call, result)
        except Malformed as error:
            yield AgentFault("malformed", str(error))
        except _HttpError as error:
            yield AgentFault("http_error", str(error))
        except Oversize as error:
            yield AgentFault("oversize", str(error))
        except Cut as error:
            yield AgentFault("truncated", str(error))
        except httpx.TimeoutException:
            yield AgentFault("timeout", f"the server sent nothing for {self._timeout_s:g} s")
        except TimeoutError:
            yield AgentFault("timeout", f"no complete reply within the {self.deadline_s:g} s limit")
        except httpx.HTTPError as error:
            yield AgentFault("disconnected", why(error))
        finally:
            # A turn that faulted never answers what is still queued: the run ends on the fault.
            while listen and not self._interjections.empty():
                owed.append(self._interjections.get_nowait()[1])
            for answered in owed:
                if not answered.done():
                    answered.set_result(None)

    async def _call_hearing(self, call: ToolCall, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        """Run one tool call; the caller heard meanwhile is answered at once, the call in the
        history as still running (PENDING) and its result a system message when it comes."""
        running = asyncio.ensure_future(tools.call(call))
        pending = False
        try:
            while not running.done():
                heard = asyncio.ensure_future(self._interjections.get())
                await asyncio.wait({running, heard}, return_when=asyncio.FIRST_COMPLETED)
                if not heard.done():
                    heard.cancel()
                    break
                turn, answered = heard.result()
                if not pending:
                    self.messages.append(pending_message(call))
                    pending = True
                self._user(turn)
                try:
                    async for output in self._turn(tools, listen=False):
                        if not isinstance(output, TurnFinished):
                            yield output
                finally:
                    answered.set_result(None)
            result = await running
        finally:
            running.cancel()
        self.messages.append(late_result_message(result) if pending else tool_message(result))
        yield ToolCalled(call, result)

    async def _request(self, reply: AssistantReply) -> AsyncIterator[Said]:
        """One Chat Completions request; fills reply, yielding sentences as they come.

        The deadline bounds the time spent waiting on the server, never a yield: the caller's
        own work between sentences is not the server's time, and a timeout must not land in it.
        """
        body: dict[str, Any] = {"model": self.model, "messages": self.messages}
        if self.functions:
            body["tools"] = self.functions
        if self.stream:
            body["stream"] = True
        budget = RequestBudget(self.deadline_s)
        request = self._client.build_request("POST", "chat/completions", json=body)
        async with budget.wait():
            response = await self._client.send(request, stream=True)
        reading = BoundedBody(response)
        try:
            if response.status_code >= 400:
                async with budget.wait():
                    excerpt = await reading.excerpt()
                raise _HttpError(response, excerpt)
            if not self.stream or not _is_event_stream(response):
                # Some servers answer a streamed request whole; take it as it comes.
                async with budget.wait():
                    data = await reading.whole()
                whole = read_reply(data.decode(errors="replace"))
                _whole_or_cut(whole.finish_reason)
                for sentence in split_sentences(whole.content):
                    yield Said(sentence)
                _fill(reply, whole)
                return
            reader, sentences, lines = StreamReader(), Sentences(), reading.lines()
            while not reader.done:
                async with budget.wait():
                    line = await anext(lines, None)
                if line is None:
                    # Closed before its terminator: what came is not the whole reply, and the
                    # words still unsaid ("Shall I") are not said.
                    raise Cut(
                        f"the stream ended without data: [DONE] after {reader.chunks} chunks "
                        f"({size(reading.received)}): the reply was cut off"
                    )
                for sentence in sentences.feed(reader.feed(line)):
                    yield Said(sentence)
            _whole_or_cut(reader.finish_reason)
            for sentence in sentences.rest():
                yield Said(sentence)
            _fill(reply, reader.finish())
        except httpx.TransportError as error:
            if isinstance(error, httpx.TimeoutException):
                raise
            raise Cut(
                f"the connection broke after {size(reading.received)} of the reply: {why(error)}"
            ) from error
        finally:
            await response.aclose()

    def _reported(self, model: str | None) -> None:
        if model and model != self.identity.model:
            self.identity = self.identity.model_copy(update={"model": model})


class _Model(BaseModel):
    id: str


class _Models(BaseModel):
    data: list[_Model]


class _HttpError(Exception):
    def __init__(self, response: httpx.Response, body: bytes) -> None:
        excerpt = " ".join(body.decode(errors="replace").split())[:_BODY_EXCERPT]
        super().__init__(f"HTTP {response.status_code} from {response.url.path}: {excerpt}")


class Cut(Exception):
    """The reply stopped before it was whole (a reset, a close before its end)."""


def _whole_or_cut(finish_reason: str | None) -> None:
    """A reply the model stopped at its token limit ends mid-thought: not a whole reply."""
    if finish_reason == "length":
        raise Cut("the model stopped at its token limit (finish_reason: length): the reply was cut")


def _is_event_stream(response: httpx.Response) -> bool:
    return response.headers.get("content-type", "").startswith("text/event-stream")


def _fill(reply: AssistantReply, source: AssistantReply) -> None:
    reply.content, reply.calls, reply.raw_calls = source.content, source.calls, source.raw_calls
    reply.model = source.model
    reply.finish_reason = source.finish_reason
