"""The speech worker: `manage.py runworker lab-speech` serves recognition and synthesis.

Routed by the "channel" entry of lab/asgi.py. It answers each request on the asker's reply
channel, from the same in-process models (and executors) a web process uses without workers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import Any

from channels.consumer import AsyncConsumer
from pydantic import ValidationError

from lab.speech.protocol import (
    REQUEST,
    AsrReply,
    AsrRequest,
    SpeechFailed,
    TtsReply,
    TtsRequest,
)
from lab.speech.service import InProcess

logger = logging.getLogger(__name__)


class SpeechWorker(AsyncConsumer):
    """Answers asr.request and tts.request; recognition and synthesis run side by side."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.models = InProcess()
        # Handles on the requests being served, so none is dropped half-way by the GC.
        self.serving: set[asyncio.Task[None]] = set()
        # Made at the first request: load the other model too, before its first request waits
        # (a run's greeting is synthesized well before the caller's first words).
        self._serve_task(self.models.warm())

    async def asr_request(self, message: dict[str, Any]) -> None:
        self._serve(message)

    async def tts_request(self, message: dict[str, Any]) -> None:
        self._serve(message)

    def _serve(self, message: dict[str, Any]) -> None:
        self._serve_task(self._answer(message))

    def _serve_task(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self.serving.add(task)
        task.add_done_callback(self.serving.discard)

    async def _answer(self, message: dict[str, Any]) -> None:
        try:
            request = REQUEST.validate_python(message)
        except ValidationError as error:
            logger.warning("refused a malformed speech request: %s", error)
            return
        if time.time() > request.deadline:
            return  # its asker has given up on this attempt (and may have asked again)
        try:
            reply: AsrReply | TtsReply | SpeechFailed = await self._reply(request)
        except Exception as error:
            # Whatever broke in the model goes back to the asker, not into the worker's log only.
            logger.exception("speech request %s failed", request.request_id)
            reply = SpeechFailed(
                request_id=request.request_id, reason=f"{type(error).__name__}: {error}"
            )
        await self.channel_layer.send(request.reply_channel, reply.model_dump())

    async def _reply(self, request: AsrRequest | TtsRequest) -> AsrReply | TtsReply:
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
