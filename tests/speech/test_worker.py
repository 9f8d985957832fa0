"""The speech worker: warm before it takes work, takes work only while free, loses none."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer

from lab.runs import turn_taking
from lab.speech import asr, service, smart_turn
from lab.speech.protocol import SPEECH_CHANNELS, AsrOptions, Kind, TtsRequest
from lab.speech.service import SpeechUnavailable, Workers
from lab.speech.worker import SpeechWorker

LINE = "I'd like to book an appointment on Tuesday morning."


class Models:
    """A worker's models for the scheduling tests: each answer says which worker gave it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.warmed = asyncio.Event()
        self.hold: asyncio.Event | None = None
        self.started = asyncio.Event()

    async def warm(self) -> None:
        await self.warmed.wait()

    async def presynthesize(self, lines: list[str]) -> None:
        return None

    async def warm_turn_model(self) -> None:
        return None

    async def recognize(self, pcm: bytes, options: AsrOptions) -> asr.Transcript:
        self.started.set()
        if self.hold is not None:
            await self.hold.wait()
        return asr.Transcript(text=self.name, audio_ms=len(pcm) // 32, elapsed_ms=1)

    async def synthesize(self, text: str) -> bytes:
        return self.name.encode()

    async def turn_probability(self, pcm: bytes) -> float:
        return 0.75


@contextlib.asynccontextmanager
async def serving(layer: Any, models: Any = None) -> AsyncIterator[SpeechWorker]:
    """One worker on this test's event loop; cancelling it is the worker dying."""
    worker = SpeechWorker(layer, models=models)
    task = asyncio.ensure_future(worker.serve())
    try:
        yield worker
    finally:
        task.cancel()
        results = await asyncio.gather(task, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) for r in results), results


async def left_queued(layer: InMemoryChannelLayer, kind: Kind) -> int:
    """How many requests of `kind` wait in the shared queue once one is there and all are idle."""
    channel = SPEECH_CHANNELS[kind]
    async with asyncio.timeout(30):
        # The in-memory layer signals no arrival: look at its queue, turn by turn of the loop.
        while channel not in layer.channels or not layer.channels[channel].qsize():  # noqa: ASYNC110
            await asyncio.sleep(0)
    for _ in range(20):
        await asyncio.sleep(0)  # room for a worker to take it, were it (wrongly) able to
    return layer.channels[channel].qsize()


def warm(name: str) -> Models:
    models = Models(name)
    models.warmed.set()
    return models


async def test_a_worker_takes_no_work_until_warm_and_then_says_it_is_ready():
    layer = InMemoryChannelLayer()
    models = Models("one")
    workers = Workers(layer, in_flight=2, timeout_s=60)
    async with serving(layer, models) as worker:
        asking = asyncio.ensure_future(workers.recognize(bytes(3200), AsrOptions()))
        assert await left_queued(layer, "asr") == 1  # waiting, not taken
        assert not worker.ready.is_set()
        models.warmed.set()
        assert (await asking).text == "one"
        assert worker.ready.is_set()
    workers.close()


async def test_a_request_goes_to_the_free_worker_and_none_waits_inside_a_busy_one():
    layer = InMemoryChannelLayer()
    busy, free = warm("busy"), warm("free")
    busy.hold = asyncio.Event()
    workers = Workers(layer, in_flight=4, timeout_s=60)
    async with serving(layer, busy):
        held = asyncio.ensure_future(workers.recognize(bytes(3200), AsrOptions()))
        await busy.started.wait()
        async with serving(layer, free):
            free.hold = asyncio.Event()
            second = asyncio.ensure_future(workers.recognize(bytes(3200), AsrOptions()))
            await free.started.wait()
            # Both busy: a third request stays in the shared queue, where either can take it.
            third = asyncio.ensure_future(workers.recognize(bytes(3200), AsrOptions()))
            assert await left_queued(layer, "asr") == 1
            # A busy worker still takes a synthesis: each model has its own queue.
            assert await workers.synthesize("Hello.") in (b"busy", b"free")
            free.hold.set()
            assert (await second).text == "free"
            assert (await third).text == "free"
            busy.hold.set()
            assert (await held).text == "busy"
    workers.close()


async def test_a_request_a_dead_worker_held_is_asked_again_and_answered_by_another():
    layer = InMemoryChannelLayer()
    doomed = warm("doomed")
    doomed.hold = asyncio.Event()  # never set: it dies holding the request
    workers = Workers(layer, in_flight=2, timeout_s=0.5)
    async with serving(layer, doomed):
        asking = asyncio.ensure_future(workers.recognize(bytes(3200), AsrOptions()))
        await doomed.started.wait()
    async with serving(layer, warm("survivor")):
        transcript = await asking  # after its first attempt's timeout, asked a second time
    workers.close()
    assert transcript.text == "survivor"


async def test_the_turn_model_runs_on_a_worker_when_workers_are_configured(monkeypatch, settings):
    settings.LAB_TURN_MODEL = True
    monkeypatch.setattr(smart_turn, "available", lambda: True)

    def not_here(pcm: bytes) -> float:
        raise AssertionError("the web process ran the turn model")

    monkeypatch.setattr(smart_turn, "probability", not_here)
    layer = InMemoryChannelLayer()
    workers = Workers(layer, in_flight=2, timeout_s=60)
    monkeypatch.setattr(service, "backend", lambda: workers)
    async with serving(layer, warm("one")):
        assert await turn_taking.turn_probability(bytes(3200)) == 0.75
    workers.close()


async def test_a_turn_model_no_worker_answers_leaves_the_turn_to_words_and_silence(
    monkeypatch, settings
):
    settings.LAB_TURN_MODEL = True
    monkeypatch.setattr(smart_turn, "available", lambda: True)
    workers = Workers(InMemoryChannelLayer(), in_flight=2, timeout_s=0.05)
    monkeypatch.setattr(service, "backend", lambda: workers)
    assert await turn_taking.turn_probability(bytes(3200)) is None
    workers.close()


async def test_a_request_its_asker_gave_up_on_is_skipped():
    layer = InMemoryChannelLayer()
    async with serving(layer, warm("one")):
        inbox = await layer.new_channel()
        stale = TtsRequest(
            request_id="stale", reply_channel=inbox, attempt=1, deadline=time.time() - 1, text="No."
        )
        fresh = stale.model_copy(update={"request_id": "fresh", "deadline": time.time() + 60})
        await layer.send(SPEECH_CHANNELS["tts"], stale.model_dump())
        await layer.send(SPEECH_CHANNELS["tts"], fresh.model_dump())
        reply = await layer.receive(inbox)
    assert reply["type"] == "tts.reply"
    assert reply["request_id"] == "fresh"


async def test_a_malformed_request_is_refused_and_the_worker_goes_on():
    layer = InMemoryChannelLayer()
    async with serving(layer, warm("one")):
        await layer.send(SPEECH_CHANNELS["tts"], {"type": "tts.request", "text": ""})
        workers = Workers(layer, in_flight=2, timeout_s=60)
        assert await workers.synthesize("Hello.") == b"one"
        workers.close()


@pytest.mark.models
async def test_a_worker_synthesizes_a_line_and_recognizes_its_words():
    layer = InMemoryChannelLayer()
    async with serving(layer):
        workers = Workers(layer, in_flight=2, timeout_s=60)
        pcm = await workers.synthesize(LINE)
        assert pcm == service.sentence_pcm(LINE)  # the same voice, the same bytes
        transcript = await workers.recognize(pcm + bytes(16_000), AsrOptions())
        workers.close()
    words = transcript.text.lower()
    assert all(word in words for word in ("appointment", "tuesday", "morning")), words
    assert transcript.audio_ms == (len(pcm) + 16_000) // 32


@pytest.mark.models  # the worker loads its models before it takes the request
async def test_a_model_failure_in_the_worker_is_reported_to_the_asker(monkeypatch):
    def broken(_pcm: bytes) -> asr.Transcript:
        raise RuntimeError("the model file is damaged")

    monkeypatch.setattr(asr, "transcribe", broken)
    layer = InMemoryChannelLayer()
    async with serving(layer):
        workers = Workers(layer, in_flight=2, timeout_s=60)
        with pytest.raises(SpeechUnavailable, match="the model file is damaged") as raised:
            await workers.recognize(bytes(3200), AsrOptions())
        workers.close()
    assert raised.value.kind == "asr_unavailable"
