"""A deployed bot called over a phone-line WebSocket: the lab is the network and the caller.

The caller's side is a live stream, as a phone network sends it: 20 ms of audio every 20 ms, the
caller's turn when there is one and silence in between. The bot's audio is played on the line's
clock (phone_speech.py) and heard with the lab's own recognizer, one stretch of speech at a
time, each a `Said` with its audio. The line is full duplex: a planned barge-in goes out over the
bot's own playback (phone_barge.py). The wire itself (Twilio's JSON, plain PCM) is a `Dialect`.

Every limit is a deadline over a whole phase (the handshake, a reply), never per message, so a
bot that trickles bytes cannot hold a call open.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.protocol import State

from lab.audio.g711 import phone_low_edge
from lab.connectors.interface import (
    AgentFault,
    AgentIdentity,
    AgentOutput,
    CallerTurn,
    ConnectorKind,
    LineMeasured,
    PlannedBargeIn,
    Said,
    ToolBox,
    TurnFinished,
)
from lab.connectors.phone_barge import BargeIn
from lab.connectors.phone_limits import FINISHED, FINISHED_KEPT, CallStats, Limits
from lab.connectors.phone_speech import (
    BYTES_PER_SECOND,
    BotMisbehaved,
    BotSpeech,
    CallNotAnswered,
    Stretch,
)
from lab.connectors.pinning import Resolve, checked_address
from lab.connectors.pipecat_eval import public_endpoint
from lab.connectors.registry import AgentSpec, ConnectorUnavailable
from lab.events.phone_events import PhoneLatency

FRAME_S = 0.02
FRAME_BYTES = int(BYTES_PER_SECOND * FRAME_S)
_MAX_MESSAGE = 1 << 16
# More messages than this in one second is a flood (a real-time bot sends about 50).
_FLOOD_PER_S = 500

Hear = Callable[[bytes], Awaitable[str]]
DEFAULT_LIMITS = Limits()
Voice = Callable[[str], Awaitable[bytes]]


async def lab_hears(pcm: bytes) -> str:
    """The lab's own recognizer (imported here: connectors load without the speech models)."""
    from lab.speech import service

    return (await service.recognize(pcm)).text.strip()


async def lab_voice(text: str) -> bytes:
    from lab.speech import service

    return await service.synthesize(text)


class Dialect(Protocol):
    """One wire's side of the call: what the network says, and what the bot's frames mean."""

    def opening(self) -> list[str | bytes]: ...
    # 20 ms of the caller on the wire, then what the network heard in it (a keypad press).
    def frame(self, pcm: bytes) -> list[str | bytes]: ...
    def closing(self) -> list[str | bytes]: ...
    def mark_played(self, name: str) -> str | bytes | None: ...
    def read(self, frame: str | bytes) -> BotSays:
        """What one frame from the bot says; raises BotMisbehaved for what no bot may send."""
        ...


@dataclass(frozen=True)
class BotSays:
    audio: bytes = b""  # 16 kHz PCM16
    mark: str | None = None
    clear: bool = False


class PhoneCall:
    """One call to one bot; the bot keeps the conversation, the lab speaks and listens."""

    def __init__(
        self,
        *,
        url: str,
        call_id: str,
        dialect: Dialect,
        identity: AgentIdentity,
        answer: Callable[[], Awaitable[str]] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        resolve: Resolve | None = None,
        hear: Hear = lab_hears,
        voice: Voice = lab_voice,
    ) -> None:
        self.url, self.dialect, self.identity, self.limits = url, dialect, identity, limits
        # The lab's id of this call, told to the bot (the run's tool calls find it by it).
        self.call_id = call_id
        # Places the call before its stream opens (Twilio's voice webhook): the stream's URL.
        self.answer = answer
        self._resolve, self._hear, self._voice = resolve, hear, voice
        self.speech = BotSpeech()
        self.stats = CallStats()
        self._ws: ClientConnection | None = None
        self._pending = bytearray()
        self._fault: AgentFault | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._caller_sent_s = 0.0  # when the caller's last queued audio will have gone out
        self._barge: BargeIn | None = None

    # -- the agent under test -------------------------------------------------------------------

    async def greet(self, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        try:
            await self._open()
        except TimeoutError:
            yield AgentFault("timeout", f"no connection within {self.limits.handshake_s:g} s")
            return
        except CallNotAnswered as error:
            yield AgentFault("http_error", str(error))
            return
        except (OSError, websockets.WebSocketException) as error:
            yield AgentFault("disconnected", f"could not reach the bot at {self.url}: {error}")
            return
        # Kept live, so a report read right after the run ends has every frame counted.
        FINISHED.append((self.call_id, self.stats))
        del FINISHED[:-FINISHED_KEPT]
        async for output in self._reply(first_s=self.limits.greeting_s, required=False):
            yield output

    async def plan_barge_in(self, plan: PlannedBargeIn) -> None:
        """The next readback gets plan's line streamed over it (its voice made now, ahead)."""
        if self._barge is not None:
            self._barge.close()
        planned_s, pcm = self._now(), await self._voice(plan.text)
        self._barge = BargeIn(plan, pcm, self._hear_line, planned_s=planned_s)

    async def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        if self._ws is None:
            yield AgentFault("disconnected", "the bot is not connected")
            return
        barge = self._barge
        if barge is not None and barge.plan.text == turn.text:
            self._barge = None
            barge.close()
        if barge is None or barge.plan.text != turn.text or not barge.spoken:
            # Typed text never reaches a phone bot: the lab says it with its own voice.
            pcm = turn.audio if turn.audio else await self._voice(turn.text)
            self._pending.extend(pcm[: len(pcm) - len(pcm) % 2])
            self._caller_sent_s = self._now() + len(self._pending) / BYTES_PER_SECOND
        # Else the line already went out over the bot's readback: it is not said twice.
        queued_s = max(0.0, self._caller_sent_s - self._now())
        # The bot cannot answer before it has heard the turn out, in real time.
        async for output in self._reply(first_s=queued_s + self.limits.reply_s, required=True):
            yield output

    async def close(self) -> None:
        if self._barge is not None:
            self._barge.close()
        ws, self._ws = self._ws, None
        for task in self._tasks:
            task.cancel()
        try:
            if ws is not None:
                with contextlib.suppress(Exception):
                    for closing in self.dialect.closing():
                        await ws.send(closing)
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(ws.close(), timeout=2.0)
        finally:
            # Also when the run's task is cancelled mid-close: the socket is never left open.
            if ws is not None and ws.state is not State.CLOSED:
                ws.transport.abort()

    # -- the line -------------------------------------------------------------------------------

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    async def _open(self) -> None:
        async with asyncio.timeout(self.limits.handshake_s):
            if self.answer is not None:
                self.url = await self.answer()
            pinned: dict[str, Any] = {}
            if self._resolve is not None:
                # To the checked address; TLS and the Host header keep the URL's name.
                parts = urlsplit(self.url)
                port = parts.port or (443 if parts.scheme == "wss" else 80)
                pinned["host"] = await checked_address(self._resolve, parts.hostname or "", port)
            self._ws = await websockets.connect(
                self.url, max_size=_MAX_MESSAGE, open_timeout=None, proxy=None, **pinned
            )
            for opening in self.dialect.opening():
                await self._ws.send(opening)
        self._tasks = [
            asyncio.create_task(self._send(self._ws)),
            asyncio.create_task(self._read(self._ws)),
        ]

    def _fail(self, fault: AgentFault) -> None:
        if self._fault is None:
            self._fault = fault

    async def _send(self, ws: ClientConnection) -> None:
        """20 ms of the caller every 20 ms; a late tick counts on from now (no catch-up burst
        that would compress the caller's speech)."""
        loop = asyncio.get_running_loop()
        silence = bytes(FRAME_BYTES)
        next_send = loop.time()
        with contextlib.suppress(websockets.WebSocketException, OSError):
            while True:
                pcm = bytes(self._pending[:FRAME_BYTES])
                del self._pending[:FRAME_BYTES]
                barge = self._barge
                if barge is not None and barge.spoken and barge.started_s is None and pcm:
                    barge.started_s = loop.time()
                started = time.perf_counter()
                frames = self.dialect.frame(pcm + silence[len(pcm) :])
                self.stats.encode_ms += (time.perf_counter() - started) * 1000
                for frame in frames:
                    await ws.send(frame)
                self.stats.frames_sent += 1
                for name in self.speech.due_marks(loop.time()):
                    await self._mark_played(ws, name)
                sleep_s = next_send + FRAME_S - loop.time()
                if sleep_s <= 0:
                    self.stats.frames_late += 1
                    next_send = loop.time()
                else:
                    next_send += FRAME_S
                    await asyncio.sleep(sleep_s)

    async def _mark_played(self, ws: ClientConnection, name: str) -> None:
        played = self.dialect.mark_played(name)
        if played is not None:
            await ws.send(played)
            self.stats.marks_acknowledged += 1

    async def _read(self, ws: ClientConnection) -> None:
        window_start, in_window = self._now(), 0
        try:
            async for frame in ws:
                now = self._now()
                if now - window_start >= 1.0:
                    window_start, in_window = now, 0
                in_window += 1
                if in_window > _FLOOD_PER_S:
                    raise BotMisbehaved(f"the bot flooded the line: over {_FLOOD_PER_S} messages/s")
                started = time.perf_counter()
                says = self.dialect.read(frame)
                self.stats.decode_ms += (time.perf_counter() - started) * 1000
                if says.audio:
                    self.speech.audio(says.audio, now)
                if says.mark is not None:
                    self.speech.mark(says.mark, now)
                if says.clear:
                    self.stats.clears += 1
                    for name in self.speech.clear(now):
                        await self._mark_played(ws, name)
            code = f"code {ws.close_code} {ws.close_reason or ''}".strip()
            self._fail(AgentFault("disconnected", f"the bot hung up mid-call ({code})"))
        except BotMisbehaved as error:
            self._fail(AgentFault("malformed", str(error)))
            # Hung up on, as the network hangs up on a stream it cannot play.
            with contextlib.suppress(Exception):
                await ws.close(1000, "bad stream")
        except (websockets.WebSocketException, OSError) as error:
            self._fail(AgentFault("disconnected", f"the bot's connection broke: {error}"))

    async def _reply(self, *, first_s: float, required: bool) -> AsyncIterator[AgentOutput]:
        """The bot's speech until the line has been quiet turn_quiet_s after it."""
        start = self._now()
        turn_sent_s = self._caller_sent_s  # a barge-in during this reply moves it on
        heard_any = False
        while True:
            await asyncio.sleep(FRAME_S)
            now = self._now()
            if self._fault is not None:
                yield self._fault
                return
            barge = self._barge
            self._barge_in(now)
            try:
                stretch = self.speech.finished_stretch(now, self.limits.stretch_gap_s)
            except BotMisbehaved as error:
                yield AgentFault("malformed", str(error))
                return
            if stretch is not None:
                if not heard_any:
                    heard_any = True
                    latency = self._latency(stretch, turn_sent_s)
                    if latency is not None:
                        yield LineMeasured(latency)
                said = await self._heard_meanwhile(stretch)
                if said is not None:
                    yield said
                cut = barge.measured(stretch) if barge is not None else None
                if cut is not None:
                    # The caller has the floor: the bot's answer to them is the next turn's.
                    yield LineMeasured(cut)
                    yield TurnFinished()
                    return
                continue
            speaking = self.speech.current is not None
            quiet_s = now - self.speech.play_end_s
            if heard_any and not speaking and quiet_s >= self.limits.turn_quiet_s:
                yield TurnFinished()
                return
            if not heard_any and not speaking and now - start >= first_s:
                if required:
                    reason = f"the bot sent no audio within {self.limits.reply_s:g} s of the turn"
                    yield AgentFault("timeout", reason)
                else:
                    yield TurnFinished()
                return
            if now - start >= first_s + self.limits.turn_s:
                yield AgentFault(
                    "timeout", f"the bot's reply went on past {self.limits.turn_s:g} s"
                )
                return

    def _barge_in(self, now: float) -> None:
        barge = self._barge
        if barge is not None and barge.due(self.speech.current, now):
            # The caller takes the floor over the bot's readback, at the scenario's point.
            self._pending[:] = barge.pcm
            self._caller_sent_s = now + barge.voiced_s

    async def _heard_meanwhile(self, stretch: Stretch) -> Said | None:
        """A stretch heard, while the line goes on: recognizing it on a busy CPU takes seconds
        the bot's next stretch (the readback a barge-in waits for) is playing in."""
        hearing = asyncio.ensure_future(self._heard(stretch))
        try:
            while not hearing.done():
                await asyncio.wait({hearing}, timeout=FRAME_S)
                self._barge_in(self._now())
            return hearing.result()
        finally:
            hearing.cancel()

    def _latency(self, stretch: Stretch, turn_sent_s: float) -> PhoneLatency | None:
        if not turn_sent_s:
            return None
        latency_ms = round((stretch.started_s - turn_sent_s) * 1000)
        self.stats.latencies_ms.append(latency_ms)
        return PhoneLatency(latency_ms=latency_ms)

    async def _hear_line(self, pcm: bytes) -> str:
        # Heard as a phone channel passes it: tiny.en took "Thursday" for "to stay" in μ-law
        # 8 kHz audio until the rumble under 300 Hz was gone (docs/benchmarks.md).
        return await self._hear(phone_low_edge(pcm))

    async def _heard(self, stretch: Stretch) -> Said | None:
        self.stats.gaps_ms += stretch.gaps_ms
        pcm = bytes(stretch.sent)
        text = await self._hear_line(pcm)
        return Said(text, audio=pcm) if text else None


def dial(
    spec: AgentSpec,
    connector: ConnectorKind,
    dialect: Callable[[str], Dialect],
    schemes: tuple[str, ...] = ("ws", "wss"),
) -> PhoneCall:
    """A call to spec's ws(s) endpoint (or one schemes allow), on the dialect made for a fresh
    call id."""
    url = urlsplit(spec.endpoint)
    if url.scheme not in schemes or not url.hostname:
        raise ConnectorUnavailable(
            f"{connector} endpoint {spec.endpoint!r} is not a ws:// or wss:// URL "
            f"(e.g. {connector}:wss://bot.example.com/media)"
        )
    call_id = secrets.token_hex(8)
    identity = AgentIdentity(connector=connector, endpoint=public_endpoint(spec.endpoint))
    return PhoneCall(
        url=spec.endpoint,
        call_id=call_id,
        dialect=dialect(call_id),
        identity=identity,
        resolve=spec.resolve,
    )
