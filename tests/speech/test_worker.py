"""The speech worker consumer, served by channels' own Worker over the in-memory layer."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import get_channel_layer
from channels.worker import Worker

from lab.asgi import application
from lab.speech import asr, service
from lab.speech.protocol import SPEECH_CHANNEL, AsrOptions, TtsRequest
from lab.speech.service import SpeechUnavailable, Workers

# Channels' consumers close stale database connections before each message they handle.
pytestmark = pytest.mark.django_db

LINE = "I'd like to book an appointment on Tuesday morning."


@contextlib.asynccontextmanager
async def speech_worker() -> AsyncIterator[Any]:
    """What `manage.py runworker lab-speech` runs, on this test's event loop; yields its layer."""
    layer = get_channel_layer()
    await layer.flush()
    worker = Worker(application=application, channels=[SPEECH_CHANNEL], channel_layer=layer)
    listening = asyncio.ensure_future(worker.handle())
    try:
        yield layer
    finally:
        listening.cancel()
        futures = [i["future"] for i in worker.application_instances.values()]
        crashed = [f.exception() for f in futures if f.done() and not f.cancelled()]
        for future in futures:
            future.cancel()
        await asyncio.gather(listening, *futures, return_exceptions=True)
    assert not crashed, crashed  # the worker's consumer must never die of a request


@pytest.mark.models
async def test_a_worker_synthesizes_a_line_and_recognizes_its_words():
    async with speech_worker() as layer:
        workers = Workers(layer, in_flight=2, timeout_s=60)
        pcm = await workers.synthesize(LINE)
        assert pcm == service.sentence_pcm(LINE)  # the same voice, the same bytes
        transcript = await workers.recognize(pcm + bytes(16_000), AsrOptions())
    words = transcript.text.lower()
    assert all(word in words for word in ("appointment", "tuesday", "morning")), words
    assert transcript.audio_ms == (len(pcm) + 16_000) // 32


@pytest.mark.models
async def test_a_request_its_asker_gave_up_on_is_skipped():
    async with speech_worker() as layer:
        inbox = await layer.new_channel()
        stale = TtsRequest(
            request_id="stale", reply_channel=inbox, attempt=1, deadline=time.time() - 1, text="No."
        )
        fresh = stale.model_copy(update={"request_id": "fresh", "deadline": time.time() + 60})
        await layer.send(SPEECH_CHANNEL, stale.model_dump())
        await layer.send(SPEECH_CHANNEL, fresh.model_dump())
        reply = await layer.receive(inbox)
    assert reply["type"] == "tts.reply"
    assert reply["request_id"] == "fresh"


@pytest.mark.models  # the worker loads both models as it starts
async def test_a_model_failure_in_the_worker_is_reported_to_the_asker(monkeypatch):
    def broken(_pcm: bytes) -> asr.Transcript:
        raise RuntimeError("the model file is damaged")

    monkeypatch.setattr(asr, "transcribe", broken)
    async with speech_worker() as layer:
        workers = Workers(layer, in_flight=2, timeout_s=60)
        with pytest.raises(SpeechUnavailable, match="the model file is damaged") as raised:
            await workers.recognize(bytes(3200), AsrOptions())
    assert raised.value.kind == "asr_unavailable"
