"""The speech worker: `manage.py runspeechworker` serves recognition, synthesis and the turn model.

It loads every model and the agent's fixed lines before it takes any work, then says it is ready.
Each model takes one request at a time from its kind's shared queue, and only while it is free:
a request waits in the queue for whichever worker frees first, never in a busy worker's memory,
so a worker that dies loses at most the requests it was serving, which their askers send again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from pydantic import ValidationError

from lab.scripted.fixed_lines import fixed_lines
from lab.speech import asr
from lab.speech.protocol import (
    KINDS,
    REQUEST,
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
)
from lab.speech.service import InProcess

logger = logging.getLogger(__name__)
# After a failed receive (Redis gone, say): wait before asking the layer again.
_RETRY_S = 1.0


class Models(Protocol):
    async def warm(self) -> None: ...

    async def presynthesize(self, lines: list[str]) -> None: ...

    async def warm_turn_model(self) -> None: ...

    async def recognize(self, pcm: bytes, options: AsrOptions) -> asr.Transcript: ...

    async def synthesize(self, text: str) -> bytes: ...

    async def turn_probability(self, pcm: bytes) -> float: ...


class SpeechWorker:
    """One worker process's models, serving the shared speech queues."""

    def __init__(self, layer: Any, *, models: Models | None = None) -> None:
        self.layer = layer
        self.models: Models = models or InProcess()
        self.ready = asyncio.Event()

    async def warm(self) -> None:
        """Every model loaded and every fixed line synthesized: no first request pays for them."""
        await self.models.warm()
        await self.models.presynthesize(list(fixed_lines()))
        await self.models.warm_turn_model()

    async def serve(self, *, on_ready: Callable[[], None] = lambda: None) -> None:
        """Warm up, report readiness, then serve until cancelled."""
        await self.warm()
        self.ready.set()
        on_ready()
        await asyncio.gather(*(self._take(kind) for kind in KINDS))

    async def _take(self, kind: Kind) -> None:
        channel = SPEECH_CHANNELS[kind]
        while True:
            try:
                message = await self.layer.receive(channel)
            except Exception:
                logger.exception("speech worker: receiving %s failed", kind)
                await asyncio.sleep(_RETRY_S)
                continue
            # Served before the next is taken: what waits, waits where any worker can take it.
            await self.answer(message)

    async def answer(self, message: dict[str, Any]) -> None:
        """Serve one request and send its reply (or the model's failure) to its asker."""
        try:
            request = REQUEST.validate_python(message)
        except ValidationError as error:
            logger.warning("refused a malformed speech request: %s", error)
            return
        if time.time() > request.deadline:
            return  # its asker has given up on this attempt (and may have asked again)
        try:
            reply: AnyReply = await self._reply(request)
        except Exception as error:
            # Whatever broke in the model goes back to the asker, not into the worker's log only.
            logger.exception("speech request %s failed", request.request_id)
            reply = SpeechFailed(
                request_id=request.request_id, reason=f"{type(error).__name__}: {error}"
            )
        try:
            await self.layer.send(request.reply_channel, reply.model_dump())
        except Exception:
            # The asker's reply channel is gone or Redis is: it times out and asks again.
            logger.exception("speech request %s: the reply could not be sent", request.request_id)

    async def _reply(self, request: AnyRequest) -> AsrReply | TtsReply | TurnReply:
        match request:
            case AsrRequest(pcm=pcm, options=options):
                transcript = await self.models.recognize(pcm, options)
                return AsrReply(
                    request_id=request.request_id,
                    text=transcript.text,
                    audio_ms=transcript.audio_ms,
                    elapsed_ms=transcript.elapsed_ms,
                    window_ms=transcript.window_ms,
                )
            case TtsRequest(text=text):
                return TtsReply(
                    request_id=request.request_id, pcm=await self.models.synthesize(text)
                )
            case TurnRequest(pcm=pcm):
                probability = await self.models.turn_probability(pcm)
                return TurnReply(request_id=request.request_id, probability=probability)
