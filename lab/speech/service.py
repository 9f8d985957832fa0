"""Recognition and synthesis for the voice channel, run in this process or on speech workers.

The backend is chosen once per process: in-process (lab/speech/recognizer.py's scheduled
recognition thread and a synthesis executor; the default, and
always with the in-memory channel layer, which no other process can reach) or, with
LAB_SPEECH_WORKERS and a shared channel layer, the workers of lab/speech/worker.py.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from pydantic import ValidationError

from lab.scripted.fixed_lines import fixed_lines
from lab.speech import asr, smart_turn, tts
from lab.speech.protocol import (
    KINDS,
    REPLY,
    SPEECH_CHANNELS,
    AnyReply,
    AnyRequest,
    AsrOptions,
    AsrReply,
    AsrRequest,
    Kind,
    SpeechFailed,
    TtsReply,
    TtsRequest,
    TurnReply,
    TurnRequest,
    asr_timeout_s,
    tts_timeout_s,
)
from lab.speech.recognizer import ASKER, Asker, Decode, Recognizer, transcribe_batch

logger = logging.getLogger(__name__)

TTS_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tts")
# The turn model gets its own thread, so it runs beside recognition rather than behind it.
TURN_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="turn")


@functools.lru_cache(maxsize=512)
def sentence_pcm(text: str) -> bytes:
    """Synthesized speech of `text`; cached, since the agent repeats its fixed phrases."""
    return tts.synthesize(text)


@functools.cache
def recognizer() -> Recognizer:
    """This process's recognition thread; speculation is of no use once the fallback has decided."""
    useful_ms = settings.LAB_VAD_END_SILENCE_MS - settings.LAB_ASR_EARLY_MS
    return Recognizer(
        speculative_ttl_s=max(useful_ms, 100) / 1000,
        batch=transcribe_batch,
        batch_max=settings.LAB_ASR_BATCH_MAX,
        collect_s=settings.LAB_ASR_BATCH_MS / 1000,
    )


class SpeechUnavailable(RuntimeError):
    """Speech could not be had; `kind` is asr_unavailable, tts_unavailable or turn_unavailable."""

    def __init__(self, kind: Kind, reason: str) -> None:
        super().__init__(reason)
        self.kind, self.reason = f"{kind}_unavailable", reason


class SpeechBackend(Protocol):
    async def recognize(self, pcm: bytes, options: AsrOptions) -> asr.Transcript: ...

    async def synthesize(self, text: str) -> bytes: ...

    async def turn_probability(self, pcm: bytes) -> float: ...

    async def warm(self) -> None: ...

    def promote(self, stream: str) -> None: ...


class InProcess:
    """The models of this process: recognition on its scheduled thread, synthesis on its own."""

    def __init__(self) -> None:
        # Calls' syntheses in flight: the fixed lines made in the background wait while any is.
        self._synthesizing = 0
        self._quiet: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self._background: asyncio.Future[None] | None = None

    async def recognize(self, pcm: bytes, options: AsrOptions) -> asr.Transcript:
        asker = ASKER.get() or Asker(stream=uuid.uuid4().hex, final=True)
        return await recognizer().run(Decode(pcm, options.prompt_free), asker)

    async def recognize_many(self, pcms: list[bytes], options: AsrOptions) -> list[asr.Transcript]:
        """Several askers' segments at once (a speech worker's batch): queued together as
        finals of their own, they go to the model in one batch of up to LAB_ASR_BATCH_MAX."""
        works = [
            (Decode(pcm, options.prompt_free), Asker(stream=uuid.uuid4().hex, final=True))
            for pcm in pcms
        ]
        return await recognizer().run_together(works)

    def promote(self, stream: str) -> None:
        recognizer().promote(stream)

    async def synthesize(self, text: str) -> bytes:
        self._synthesizing += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(TTS_EXECUTOR, sentence_pcm, text)
        finally:
            self._synthesizing -= 1
            quiet = self._quiet
            if not self._synthesizing and quiet is not None and quiet[0] is loop:
                quiet[1].set()

    async def turn_probability(self, pcm: bytes) -> float:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(TURN_EXECUTOR, smart_turn.probability, pcm)

    async def warm_turn_model(self) -> None:
        """Load the turn model, where its wheel is installed."""
        if smart_turn.available():
            await asyncio.get_running_loop().run_in_executor(TURN_EXECUTOR, smart_turn.load)

    async def warm(self) -> None:
        """Load both models (about a second each) and the greeting before a caller waits on them.

        The agent's other fixed lines follow in the background (about 6 s of synthesis on an
        idle core, too long to make a first caller wait for), each only while no call's own
        synthesis is waiting for the thread.
        """
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, asr.load_model)
        await loop.run_in_executor(TTS_EXECUTOR, tts.load_voice)
        greeting, *others = fixed_lines()
        await self.presynthesize([greeting])
        running = self._background
        if running is None or running.get_loop() is not loop:
            self._background = asyncio.ensure_future(self._presynthesize_when_quiet(others))

    async def presynthesize(self, lines: Iterable[str]) -> None:
        """Put `lines` in the phrase cache, in the chunks a reply is synthesized in."""
        for line in lines:
            for chunk in tts.chunks(line):
                await self.synthesize(chunk)

    async def _presynthesize_when_quiet(self, lines: list[str]) -> None:
        loop = asyncio.get_running_loop()
        quiet = asyncio.Event()
        self._quiet = (loop, quiet)
        for chunk in (chunk for line in lines for chunk in tts.chunks(line)):
            while self._synthesizing:
                quiet.clear()
                await quiet.wait()
            await loop.run_in_executor(TTS_EXECUTOR, sentence_pcm, chunk)


class _Inbox:
    """This process's reply channel on one event loop, and the requests waiting on it."""

    def __init__(self, layer: Any, in_flight: int) -> None:
        self.layer = layer
        self.loop = asyncio.get_running_loop()
        self.pending: dict[str, asyncio.Future[AnyReply]] = {}
        self.slots = {kind: asyncio.Semaphore(in_flight) for kind in KINDS}
        self.opened: asyncio.Future[str] = asyncio.ensure_future(layer.new_channel())
        self.reader = asyncio.ensure_future(self._read())

    @property
    def broken(self) -> bool:
        """The reply channel could not be had (the layer was down): open a new one next time."""
        opened = self.opened
        return opened.done() and (opened.cancelled() or opened.exception() is not None)

    async def _read(self) -> None:
        try:
            channel = await self.opened
        except Exception:
            return  # broken: the next request opens a new inbox
        while True:
            try:
                message = await self.layer.receive(channel)
                reply = REPLY.validate_python(message)
            except ValidationError as error:
                logger.warning("ignored a malformed speech reply: %s", error)
                continue
            except Exception:
                # A lost layer connection must not end the inbox: its waiters time out, retry.
                logger.exception("speech replies: receive failed")
                await asyncio.sleep(1)
                continue
            waiting = self.pending.get(reply.request_id)
            # A late answer to a request already answered, or given up on, is dropped.
            if waiting is not None and not waiting.done():
                waiting.set_result(reply)


class Workers:
    """Speech on the speech workers: bounded in flight, timed out, retried once, reported."""

    def __init__(self, layer: Any, *, in_flight: int, timeout_s: float) -> None:
        self.layer = layer
        self.in_flight = in_flight
        self.timeout_s = timeout_s
        self._inbox_now: _Inbox | None = None

    async def recognize(self, pcm: bytes, options: AsrOptions) -> asr.Transcript:
        def request(**fields: Any) -> AsrRequest:
            return AsrRequest(pcm=pcm, options=options, **fields)

        reply = await self._ask("asr", request, asr_timeout_s(self.timeout_s, pcm))
        if not isinstance(reply, AsrReply):
            raise SpeechUnavailable("asr", f"the speech worker answered {reply.type}")
        return asr.Transcript(
            text=reply.text,
            audio_ms=reply.audio_ms,
            elapsed_ms=reply.elapsed_ms,
            window_ms=reply.window_ms,
        )

    async def synthesize(self, text: str) -> bytes:
        def request(**fields: Any) -> TtsRequest:
            return TtsRequest(text=text, **fields)

        reply = await self._ask("tts", request, tts_timeout_s(self.timeout_s, text))
        if not isinstance(reply, TtsReply):
            raise SpeechUnavailable("tts", f"the speech worker answered {reply.type}")
        return reply.pcm

    async def turn_probability(self, pcm: bytes) -> float:
        def request(**fields: Any) -> TurnRequest:
            return TurnRequest(pcm=pcm, **fields)

        reply = await self._ask("turn", request, self.timeout_s)
        if not isinstance(reply, TurnReply):
            raise SpeechUnavailable("turn", f"the speech worker answered {reply.type}")
        return reply.probability

    async def warm(self) -> None:
        """Nothing to load: the models live in the workers, never in a web process."""

    def promote(self, stream: str) -> None:
        """Each worker takes one recognition at a time, when free: there is no queue to reorder."""

    def close(self) -> None:
        """Stop listening for replies (before the channel layer's connections close)."""
        if self._inbox_now is not None:
            self._inbox_now.reader.cancel()

    def _inbox(self) -> _Inbox:
        inbox = self._inbox_now
        if inbox is None or inbox.broken or inbox.loop is not asyncio.get_running_loop():
            inbox = self._inbox_now = _Inbox(self.layer, self.in_flight)
        return inbox

    async def _ask(
        self, kind: Kind, request: Callable[..., AnyRequest], timeout_s: float
    ) -> AsrReply | TtsReply | TurnReply:
        inbox = self._inbox()
        try:
            reply_channel = await asyncio.shield(inbox.opened)
        except Exception as error:
            raise SpeechUnavailable(kind, f"no reply channel: {error}") from error
        slot = inbox.slots[kind]
        try:
            # Back-pressure: beyond the bound the turn waits for a slot, but not for ever.
            async with asyncio.timeout(self.timeout_s):
                await slot.acquire()
        except TimeoutError:
            raise SpeechUnavailable(
                kind, f"{self.in_flight} {kind} requests already in flight for {self.timeout_s:g} s"
            ) from None
        request_id = uuid.uuid4().hex
        answered = inbox.pending[request_id] = asyncio.get_running_loop().create_future()
        try:
            # A worker that dies mid-request never answers: ask once more, another may take it.
            for attempt in (1, 2):
                message = request(
                    request_id=request_id,
                    reply_channel=reply_channel,
                    attempt=attempt,
                    deadline=time.time() + timeout_s,
                )
                try:
                    await self.layer.send(SPEECH_CHANNELS[kind], message.model_dump())
                except ChannelFull:
                    raise SpeechUnavailable(kind, "the speech workers' queue is full") from None
                except Exception as error:
                    # Redis unreachable, say: the turn is reported, not lost with a crashed task.
                    raise SpeechUnavailable(
                        kind, f"the request could not be sent: {error}"
                    ) from error
                try:
                    async with asyncio.timeout(timeout_s):
                        reply = await asyncio.shield(answered)
                except TimeoutError:
                    logger.warning(
                        "%s request %s: no answer, attempt %d", kind, request_id, attempt
                    )
                    continue
                if isinstance(reply, SpeechFailed):
                    raise SpeechUnavailable(kind, f"the speech worker failed: {reply.reason}")
                return reply
            raise SpeechUnavailable(
                kind, f"no speech worker answered within {timeout_s:.1f} s, asked twice"
            )
        finally:
            del inbox.pending[request_id]
            slot.release()


def choose_backend(*, workers: bool, layer: Any) -> SpeechBackend:
    """Workers only when asked for and reachable: an in-memory layer lives in this process."""
    if workers and layer is not None and not isinstance(layer, InMemoryChannelLayer):
        return Workers(
            layer,
            in_flight=settings.LAB_SPEECH_IN_FLIGHT,
            timeout_s=settings.LAB_SPEECH_TIMEOUT_S,
        )
    return InProcess()


@functools.cache
def backend() -> SpeechBackend:
    """This process's backend, chosen at its first use."""
    return choose_backend(workers=settings.LAB_SPEECH_WORKERS, layer=get_channel_layer())


async def recognize(pcm: bytes, *, prompt_free: bool = False) -> asr.Transcript:
    """Transcribe one endpointed segment of 16 kHz mono PCM16."""
    return await backend().recognize(pcm, AsrOptions(prompt_free=prompt_free))


def promote(stream: str) -> None:
    """`stream`'s turn is decided: its recognition now runs before any call's speculation."""
    backend().promote(stream)


async def synthesize(text: str) -> bytes:
    """`text` as 16 kHz mono PCM16."""
    return await backend().synthesize(text)


async def turn_probability(pcm: bytes) -> float:
    """P(the caller's turn is complete) for the segment so far, from the turn model."""
    return await backend().turn_probability(pcm)


async def warm() -> None:
    """Have the models ready before the first caller waits on them (a no-op with workers)."""
    await backend().warm()
