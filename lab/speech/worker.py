"""The speech worker: `manage.py runspeechworker` serves recognition, synthesis and the turn model.

It loads every model and the agent's fixed lines before it takes any work, then says it is ready.
Each model takes one request at a time from its kind's shared queue, and only while it is free:
a request waits in the queue for whichever worker frees first, never in a busy worker's memory,
so a worker that dies loses at most the requests it was serving, which their askers send again.
The one bounded exception is recognition: a free ASR model that takes a request goes on taking
what arrives within LAB_ASR_BATCH_MS (up to LAB_ASR_BATCH_MAX in all) and recognizes those of
the same options in one batch, so a request is held out of the queue at most that long before
its recognition starts (one of other options, after the batch, at most one batch longer).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol, cast

from channels_redis.core import RedisChannelLayer
from django.conf import settings
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
# Redis counts a blocking pop's timeout in milliseconds (and reads 0 as for ever).
_LEAST_WAIT_S = 0.001


class Models(Protocol):
    async def warm(self) -> None: ...

    async def presynthesize(self, lines: list[str]) -> None: ...

    async def warm_turn_model(self) -> None: ...

    async def recognize(self, pcm: bytes, options: AsrOptions) -> asr.Transcript: ...

    async def recognize_many(
        self, pcms: list[bytes], options: AsrOptions
    ) -> list[asr.Transcript]: ...

    async def synthesize(self, text: str) -> bytes: ...

    async def turn_probability(self, pcm: bytes) -> float: ...


class SpeechWorker:
    """One worker process's models, serving the shared speech queues."""

    def __init__(
        self,
        layer: Any,
        *,
        models: Models | None = None,
        batch_max: int | None = None,
        collect_s: float | None = None,
    ) -> None:
        self.layer = layer
        self.models: Models = models or InProcess()
        self.ready = asyncio.Event()
        self.batch_max = settings.LAB_ASR_BATCH_MAX if batch_max is None else batch_max
        self.collect_s = settings.LAB_ASR_BATCH_MS / 1000 if collect_s is None else collect_s
        # How many recognitions each model call served, by size (counted, not listed: a
        # worker lives as long as the deployment).
        self.batch_sizes: Counter[int] = Counter()

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
            if kind == "asr":
                await self.answer_together([message, *await self._more(channel)])
            else:
                await self.answer(message)

    async def _more(self, channel: str) -> list[dict[str, Any]]:
        """What else arrives on `channel` within collect_s, to recognize with the first taken."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.collect_s
        more: list[dict[str, Any]] = []
        while len(more) + 1 < self.batch_max and (left := deadline - loop.time()) > _LEAST_WAIT_S:
            try:
                message = await receive_within(self.layer, channel, left)
            except Exception:
                logger.exception("speech worker: receiving more to batch failed")
                break
            if message is None:
                break
            more.append(message)
        return more

    async def answer(self, message: dict[str, Any]) -> None:
        """Serve one request and send its reply (or the model's failure) to its asker."""
        request = _request(message)
        if request is not None:
            await self._serve(request)

    async def answer_together(self, messages: list[dict[str, Any]]) -> None:
        """Serve requests taken together: the recognitions alike in options (those of the first)
        in one model call, every other one by itself after them."""
        requests = [request for request in map(_request, messages) if request is not None]
        asrs = [request for request in requests if isinstance(request, AsrRequest)]
        alike = [request for request in asrs if request.options == asrs[0].options]
        batch = alike if len(alike) > 1 else []
        if batch:
            await self._recognize_together(batch)
        for request in requests:
            if all(request is not member for member in batch):
                await self._serve(request)

    async def _recognize_together(self, batch: list[AsrRequest]) -> None:
        self.batch_sizes[len(batch)] += 1
        logger.info("speech worker: %d recognitions in one batch", len(batch))
        replies: list[AnyReply]
        try:
            transcripts = await self.models.recognize_many(
                [request.pcm for request in batch], batch[0].options
            )
            replies = [
                _asr_reply(request.request_id, transcript)
                for request, transcript in zip(batch, transcripts, strict=True)
            ]
        except Exception as error:
            # One model call for all of them: its failure is every asker's.
            logger.exception("a batch of %d recognitions failed", len(batch))
            replies = [_failed(request, error) for request in batch]
        for request, reply in zip(batch, replies, strict=True):
            await self._send(request, reply)

    async def _serve(self, request: AnyRequest) -> None:
        if isinstance(request, AsrRequest):
            self.batch_sizes[1] += 1
        try:
            reply: AnyReply = await self._reply(request)
        except Exception as error:
            # Whatever broke in the model goes back to the asker, not into the worker's log only.
            logger.exception("speech request %s failed", request.request_id)
            reply = _failed(request, error)
        await self._send(request, reply)

    async def _send(self, request: AnyRequest, reply: AnyReply) -> None:
        try:
            await self.layer.send(request.reply_channel, reply.model_dump())
        except Exception:
            # The asker's reply channel is gone or Redis is: it times out and asks again.
            logger.exception("speech request %s: the reply could not be sent", request.request_id)

    async def _reply(self, request: AnyRequest) -> AsrReply | TtsReply | TurnReply:
        match request:
            case AsrRequest(pcm=pcm, options=options):
                transcript = await self.models.recognize(pcm, options)
                return _asr_reply(request.request_id, transcript)
            case TtsRequest(text=text):
                return TtsReply(
                    request_id=request.request_id, pcm=await self.models.synthesize(text)
                )
            case TurnRequest(pcm=pcm):
                probability = await self.models.turn_probability(pcm)
                return TurnReply(request_id=request.request_id, probability=probability)


async def receive_within(layer: Any, channel: str, timeout_s: float) -> dict[str, Any] | None:
    """A message waiting on `channel` or arriving within timeout_s, else None.

    Never by cancelling a receive: channels-redis keeps a message only once its pop has
    returned, so a receive cancelled as Redis hands one over loses it (12 of 1029 requests over
    549 cancelled 20 ms receives, measured here). On Redis the pop times out on the server.
    """
    if isinstance(layer, RedisChannelLayer):
        connection = layer.connection(random.randrange(layer.ring_size))
        popped = await connection.bzpopmin(layer.prefix + channel, timeout=round(timeout_s, 3))
        return None if popped is None else cast(dict[str, Any], layer.deserialize(popped[1]))
    try:
        # The in-memory layer's receive leaves the message in its queue when cancelled.
        async with asyncio.timeout(timeout_s):
            return cast(dict[str, Any], await layer.receive(channel))
    except TimeoutError:
        return None


def _request(message: dict[str, Any]) -> AnyRequest | None:
    """The request in `message`, or None for one refused (malformed) or given up on."""
    try:
        request = REQUEST.validate_python(message)
    except ValidationError as error:
        logger.warning("refused a malformed speech request: %s", error)
        return None
    if time.time() > request.deadline:
        return None  # its asker has given up on this attempt (and may have asked again)
    return request


def _asr_reply(request_id: str, transcript: asr.Transcript) -> AsrReply:
    return AsrReply(
        request_id=request_id,
        text=transcript.text,
        audio_ms=transcript.audio_ms,
        elapsed_ms=transcript.elapsed_ms,
        window_ms=transcript.window_ms,
    )


def _failed(request: AnyRequest, error: Exception) -> SpeechFailed:
    return SpeechFailed(request_id=request.request_id, reason=f"{type(error).__name__}: {error}")
