"""A pipecat bot as an agent under test, reached the way pipecat 1.14's own eval harness reaches it.

Any bot run by pipecat's development runner (`pipecat.runner.run`) serves `/ws`; the harness
(`pipecat/evals/client.py`, `client_transport.py`, `serializer.py`) connects there and speaks
RTVI 2.2.0 JSON text frames, every message `{"label": "rtvi-ai", "type": …, "id"?, "data": …}`:

- first `client-message` `{t: "eval-connect", d: {skip_tts, capture_bot_audio,
  capture_bot_images}}`: `create_transport` reads it and builds the bot's eval transport
  (`EvalFastAPIWebsocketTransport`) with those flags (the server transport reads them from the
  URL query instead); then `client-ready` `{version: "2.2.0", about: {library}}`, answered by
  the bot's RTVIProcessor with `bot-ready` `{version, about, capabilities}`;
- `client-message` `{t: "eval-configure", d: {function_call_report_level: {"*": "full"}}}`
  raises the bot's RTVIObserver report level for this connection only (its default, "none",
  hides names, arguments and results); `eval-context` `{messages}` seeds the LLM context and
  `eval-cancel` `{}` cancels the bot's pipeline;
- a text turn is `send-text` `{content, options: {run_immediately: true, audio_response}}`;
- the bot reports `bot-llm-started`, `bot-llm-text` `{text}` (streamed chunks; `llm-raw-text`
  when its observer enables only raw text), `bot-llm-stopped`, `llm-function-call-started`
  `{function_name}` (before the response that asked for it stops),
  `llm-function-call-in-progress` `{tool_call_id, function_name, arguments}`,
  `llm-function-call-stopped` `{tool_call_id, cancelled, function_name, result}`,
  `bot-started-speaking` / `bot-stopped-speaking`, `bot-output`, `bot-interrupted`, `user-input`
  `{text, input_type: "chat", final, msg_id}` (the echo of a send-text, by its id), `error`
  `{error, fatal}`, `error-response`, and with `capture_bot_audio` `eval-bot-audio`
  `{audio: base64 PCM16, sampleRate}`.

A text turn's end on the wire (`bot-llm-stopped`) comes before the bot's own assistant
aggregator, which sits after its output transport, has kept the reply; a `send-text` right
then interrupts the bot and cuts the kept reply short (seen with pipecat 1.14: "…3:00 PM.
Shall"). Nothing on the wire says the reply was kept, so a turn is sent only once the bot has
been quiet for `settle_s`, as a caller takes a moment to answer.

Audio mode (voice runs, unless LAB_PIPECAT_MODE=text) is the harness's too: connect with
`skip_tts: false, capture_bot_audio: true`, stream the caller's audio as the lab heard it
(pipecat_audio.py), paced in real time as `raw-audio` `{base64Audio, sampleRate, numChannels}`,
silence in between; the turn starts at the bot's final `user-transcription` of it, each
`bot-tts-text` is a `Said` with the `eval-bot-audio` that came before it, and the turn ends once
the bot has stopped speaking all that its LLM said (a turn without audio goes as a send-text
with `audio_response: true`).

Text mode: the bot's LLM text comes back sentence by sentence as `Said`, each call it ran
on its own function handlers as `ToolObserved` (the lab cannot stand in front of them), and its
turn ends at the `bot-llm-stopped` of a response that started no call with none outstanding.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.protocol import State

from lab.connectors.bounded import MAX_FRAME_BYTES, MAX_TURN_BYTES, Oversize
from lab.connectors.interface import (
    AgentFault,
    AgentIdentity,
    AgentOutput,
    CallerTurn,
    ToolBox,
    TurnFinished,
)
from lab.connectors.pinning import Resolve, checked_address
from lab.connectors.pipecat_audio import BYTES_PER_SECOND, AudioFeed
from lab.connectors.pipecat_inbox import BotInbox, Closed, Garbage
from lab.connectors.pipecat_replies import (
    GRACE_OVER,
    Reply,
    Starts,
    VoicedReply,
    echo_of,
    transcribed,
)
from lab.connectors.registry import AgentSpec, ConnectorUnavailable
from lab.connectors.rtvi import (
    PROTOCOL_VERSION,
    bot_audio_s,
    eval_message,
    message,
    public_endpoint,
)

TIMEOUT_ENV = "LAB_AGENT_REQUEST_TIMEOUT_S"
SETTLE_ENV = "LAB_PIPECAT_SETTLE_S"
MODE_ENV = "LAB_PIPECAT_MODE"
_CLOSE_S = 2.0


def connect(spec: AgentSpec) -> PipecatEvalAgent:
    """The registry's factory: `pipecat:ws://HOST:PORT/ws`."""
    url = urlsplit(spec.endpoint)
    if url.scheme not in ("ws", "wss") or not url.hostname:
        raise ConnectorUnavailable(
            f"pipecat endpoint {spec.endpoint!r} is not a ws:// or wss:// URL "
            "(e.g. pipecat:ws://127.0.0.1:7860/ws)"
        )
    seconds = {}
    for name, default in ((TIMEOUT_ENV, "20"), (SETTLE_ENV, "0.2")):
        value = os.environ.get(name, default)
        try:
            seconds[name] = float(value)
        except ValueError:
            raise ConnectorUnavailable(f"{name}={value!r} is not seconds") from None
    mode = os.environ.get(MODE_ENV, "audio")
    if mode not in ("audio", "text"):
        raise ConnectorUnavailable(f"{MODE_ENV}={mode!r} is neither audio nor text")
    return PipecatEvalAgent(
        url=spec.endpoint,
        model=spec.model or None,
        timeout_s=seconds[TIMEOUT_ENV],
        settle_s=seconds[SETTLE_ENV],
        resolve=spec.resolve,
        audio=spec.voice and mode == "audio",
    )


class PipecatEvalAgent:
    """One connection to one bot: the bot keeps the conversation, the lab sends turns."""

    def __init__(
        self,
        *,
        url: str,
        model: str | None = None,
        timeout_s: float = 20.0,
        handshake_timeout_s: float = 15.0,
        settle_s: float = 0.2,
        resolve: Resolve | None = None,
        audio: bool = False,
        max_turn_bytes: int = MAX_TURN_BYTES,
    ) -> None:
        self.url = url
        self.max_turn_bytes = max_turn_bytes
        self._resolve = resolve
        self.audio = audio
        self.settle_s = settle_s
        self.timeout_s = timeout_s
        self.handshake_timeout_s = handshake_timeout_s
        self.identity = AgentIdentity(
            connector="pipecat",
            endpoint=public_endpoint(url),
            model=model,
            tools_observed_only=True,
        )
        self._ids = itertools.count(1)
        self._ws: ClientConnection | None = None
        self._inbox = BotInbox(timeout_s=timeout_s, max_turn_bytes=max_turn_bytes)
        self.bot_about: dict[str, Any] = {}
        self._echoes = False  # the bot has echoed a turn (user-input with its msg_id)
        self._feed: AudioFeed | None = None

    async def greet(self, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        """Connect and shake hands; the bot's own greeting, if any, is not the lab's to hear."""
        fault: AgentFault | None = None
        try:
            await self._open()
        except TimeoutError:
            fault = AgentFault("timeout", f"no bot-ready within {self.handshake_timeout_s:g} s")
        except Garbage as error:
            fault = AgentFault("malformed", str(error))
        except Oversize as error:
            fault = AgentFault("oversize", f"during the handshake {error}")
        except (Closed, OSError, websockets.WebSocketException) as error:
            fault = AgentFault("disconnected", f"could not reach the bot at {self.url}: {error}")
        if fault is None:
            yield TurnFinished()
            return
        # A bot that failed its handshake is not talked to again, nor read on (one that
        # floods would otherwise go on filling the lab for the rest of the run).
        self._abandon()
        yield fault

    async def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        if self._ws is None:
            yield AgentFault("disconnected", "the bot is not connected")
            return
        await self._inbox.settle(self.settle_s)
        self._inbox.drop_stale()
        try:
            if self._feed is not None and turn.audio:
                self._feed.queue(turn.audio)
                starts: Starts = transcribed
                # The bot cannot answer before it has heard the turn out, in real time.
                streaming_s = len(turn.audio) / BYTES_PER_SECOND
            else:
                sent_id = self._id()
                options = {"run_immediately": True, "audio_response": self.audio}
                # A bot that stops reading holds a send back (TCP): the turn's limit holds it.
                async with asyncio.timeout(self.timeout_s):
                    await self._ws.send(
                        message("send-text", {"content": turn.text, "options": options}, sent_id)
                    )
                starts, streaming_s = echo_of(sent_id), 0.0
            async for output in self._turn(starts, streaming_s):
                yield output
        except TimeoutError:
            yield AgentFault(
                "timeout",
                f"the bot did not finish its turn within {self.timeout_s:g} s of its own time",
            )
        except Garbage as error:
            yield AgentFault("malformed", str(error))
        except Oversize as error:
            self._abandon()
            yield AgentFault("oversize", str(error))
        except (Closed, OSError, websockets.WebSocketException) as error:
            yield AgentFault("disconnected", f"the bot closed the connection mid-turn: {error}")

    async def close(self) -> None:
        ws, self._ws = self._ws, None
        if self._feed is not None:
            await self._feed.close()
        try:
            if ws is not None:
                # One deadline for the goodbye, however the bot takes it (or does not read).
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(_CLOSE_S):
                        # As the harness ends a scenario: the bot tears its pipeline down.
                        with contextlib.suppress(websockets.WebSocketException):
                            await ws.send(eval_message("eval-cancel", {}, self._id()))
                        await ws.close()
        finally:
            # Also when the run's task is cancelled mid-close, or the goodbye's deadline cut the
            # close handshake after the state said CLOSED but before the transport was closed:
            # the socket is never left open.
            if ws is not None and (ws.state is not State.CLOSED or not ws.transport.is_closing()):
                ws.transport.abort()
            await self._inbox.stop()
            # Let the aborted transport's connection_lost run before a headless run's loop closes.
            await asyncio.sleep(0)

    def _abandon(self) -> None:
        """Drop the connection at once: no goodbye, no more reading."""
        ws, self._ws = self._ws, None
        if ws is not None:
            ws.transport.abort()
        self._inbox.cancel()

    # -- the wire -------------------------------------------------------------------------------

    async def _open(self) -> None:
        async with asyncio.timeout(self.handshake_timeout_s):
            pinned: dict[str, Any] = {}
            if self._resolve is not None:
                # To the checked address; TLS and the Host header keep the URL's name.
                parts = urlsplit(self.url)
                port = parts.port or (443 if parts.scheme == "wss" else 80)
                pinned["host"] = await checked_address(self._resolve, parts.hostname or "", port)
            self._ws = await websockets.connect(
                self.url, max_size=MAX_FRAME_BYTES, open_timeout=None, proxy=None, **pinned
            )
            self._inbox.start(self._ws)
            flags = {
                "skip_tts": not self.audio,
                "capture_bot_audio": self.audio,
                "capture_bot_images": False,
            }
            await self._ws.send(eval_message("eval-connect", flags, "eval-connect"))
            ready = {"version": PROTOCOL_VERSION, "about": {"library": "voice-reliability-lab"}}
            await self._ws.send(message("client-ready", ready, "client-ready"))
            # The deadline above holds for the whole handshake, however much the bot sends.
            cap = self._inbox.cap()
            while (received := await self._inbox.next()).get("type") != "bot-ready":
                self._inbox.within(cap, "what the bot sent before bot-ready")
        data = received.get("data")
        about = data.get("about") if isinstance(data, dict) else None
        self.bot_about = dict(about) if isinstance(about, dict) else {}
        level = {"function_call_report_level": {"*": "full"}}
        await self._ws.send(eval_message("eval-configure", level, self._id()))
        if self.audio:
            self._feed = AudioFeed(self._ws.send, message)
            self._feed.start()

    def _id(self) -> str:
        return str(next(self._ids))

    def _reply(self) -> Reply:
        return VoicedReply() if self.audio else Reply()

    async def _turn(self, starts: Starts, streaming_s: float = 0.0) -> AsyncIterator[AgentOutput]:
        """The bot's messages until its turn ends, as Said / ToolObserved / TurnFinished.

        The bot echoes the turn (`user-input` with the send-text's msg_id, or its final
        transcription of the caller's audio) before it answers it; what came before the echo is
        an earlier reply still streaming (a greeting) and is dropped. Until a bot has echoed
        once, a reply ending before the echo is taken as this turn's.
        """
        reply, echoed = self._reply(), False
        held: list[AgentOutput] = []
        loop = asyncio.get_running_loop()
        # One deadline over the whole turn, not an idle timer: the bot's own time (timeout_s)
        # plus what is not its time, the caller's audio streaming in and its own speech playing.
        deadline = loop.time() + self.timeout_s + streaming_s
        cap = self._inbox.cap()
        while not reply.finished:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError
            grace = reply.grace_s()
            try:
                received = await self._inbox.next(min(grace, left) if grace else left)
            except TimeoutError:
                if grace is None or deadline - loop.time() <= 0:
                    raise
                received = {"type": GRACE_OVER}
            self._inbox.within(cap, "the bot's turn")
            kind, data = received.get("type"), received.get("data")
            data = data if isinstance(data, dict) else {}
            if kind == "eval-bot-audio":
                deadline += bot_audio_s(data)
            if not echoed and starts(str(kind), data):
                reply, echoed, held, self._echoes = self._reply(), True, [], True
                continue
            outputs = reply.take(str(kind), data)
            if echoed:
                for output in outputs:
                    yield output
            elif reply.finished and self._echoes:
                reply, held = (
                    self._reply(),
                    [],
                )  # an earlier reply's end: this turn's is still to come
            elif reply.finished:
                for output in [*held, *outputs]:
                    yield output
            else:
                held.extend(outputs)
