"""The speech service's backends: in-process by default, workers over a shared channel layer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.layers import InMemoryChannelLayer
from channels_redis.core import RedisChannelLayer

from lab.speech import asr, service, tts
from lab.speech.protocol import (
    REQUEST,
    SPEECH_CHANNELS,
    AsrOptions,
    AsrReply,
    AsrRequest,
    TtsReply,
)
from lab.speech.service import InProcess, SpeechUnavailable, Workers

TINY_PCM = bytes(320)  # 10 ms: its timeout is the base alone, near enough


class CountingLayer(InMemoryChannelLayer):
    """An in-memory layer that counts speech requests sent but not yet answered."""

    def __init__(self) -> None:
        super().__init__()
        self.open = 0
        self.peak = 0

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        if channel in SPEECH_CHANNELS.values():
            self.open += 1
            self.peak = max(self.peak, self.open)
        elif message["type"].endswith(".reply"):
            self.open -= 1
        await super().send(channel, message)


def transcript_of(request: AsrRequest, text: str = "hello") -> dict[str, Any]:
    return AsrReply(
        request_id=request.request_id, text=text, audio_ms=10, elapsed_ms=1, window_ms=30000
    ).model_dump()


async def take(layer: Any) -> AsrRequest:
    async with asyncio.timeout(30):  # a request that never comes fails the test, never hangs it
        request = REQUEST.validate_python(await layer.receive(SPEECH_CHANNELS["asr"]))
    assert isinstance(request, AsrRequest)
    return request


@pytest.fixture
def no_models(monkeypatch):
    """Fail the test if anything in this process loads the ASR model or the TTS voice."""

    def refuse(*_args: Any) -> None:
        raise AssertionError("a model was loaded in the web process")

    for module, name in (
        (asr, "load_model"),
        (asr, "_model"),
        (tts, "load_voice"),
        (tts, "_voice"),
    ):
        monkeypatch.setattr(module, name, refuse)


def test_speech_stays_in_process_unless_workers_are_asked_for_over_a_shared_layer():
    redis_layer = RedisChannelLayer(hosts=[{"address": "redis://127.0.0.1:1/0"}])
    assert isinstance(service.choose_backend(workers=True, layer=redis_layer), Workers)
    assert isinstance(service.choose_backend(workers=False, layer=redis_layer), InProcess)
    # No other process can reach an in-memory layer, so its workers could never answer.
    assert isinstance(service.choose_backend(workers=True, layer=InMemoryChannelLayer()), InProcess)
    assert isinstance(service.choose_backend(workers=True, layer=None), InProcess)


async def test_a_web_process_with_workers_loads_no_models(monkeypatch, settings, no_models):
    layer = InMemoryChannelLayer()
    # Stands in for the Redis layer the setting needs; choose_backend only asks "shared?".
    monkeypatch.setattr(service, "InMemoryChannelLayer", type("Nothing", (), {}))
    monkeypatch.setattr(service, "get_channel_layer", lambda: layer)
    settings.LAB_SPEECH_WORKERS = True
    service.backend.cache_clear()
    try:
        assert isinstance(service.backend(), Workers)
        await service.warm()  # what a voice run does before its first turn

        async def worker() -> None:
            asked = REQUEST.validate_python(await layer.receive(SPEECH_CHANNELS["asr"]))
            await layer.send(asked.reply_channel, transcript_of(asked))
            asked = REQUEST.validate_python(await layer.receive(SPEECH_CHANNELS["tts"]))
            reply = TtsReply(request_id=asked.request_id, pcm=b"\1\2")
            await layer.send(asked.reply_channel, reply.model_dump())

        answering = asyncio.ensure_future(worker())
        assert (await service.recognize(TINY_PCM)).text == "hello"
        assert await service.synthesize("Hello.") == b"\1\2"
        await answering
    finally:
        service.backend.cache_clear()


async def test_a_request_no_worker_answers_is_asked_twice_then_reported(no_models):
    layer = InMemoryChannelLayer()
    workers = Workers(layer, in_flight=2, timeout_s=0.1)

    async def take_two() -> tuple[AsrRequest, AsrRequest]:
        # One receiver at a time: the in-memory layer hands a second waiter nothing.
        return await take(layer), await take(layer)

    taking = asyncio.ensure_future(take_two())
    with pytest.raises(SpeechUnavailable) as raised:
        await workers.recognize(TINY_PCM, AsrOptions())
    assert raised.value.kind == "asr_unavailable"
    assert "asked twice" in raised.value.reason
    first, second = await taking
    assert (first.attempt, second.attempt) == (1, 2)
    assert first.request_id == second.request_id
    assert first.reply_channel == second.reply_channel


async def test_a_worker_that_dies_mid_request_is_covered_by_the_retry(no_models):
    layer = InMemoryChannelLayer()
    workers = Workers(layer, in_flight=2, timeout_s=0.1)

    async def dies_then_answers() -> int:
        await take(layer)  # taken, then never answered: its worker died
        again = await take(layer)
        await layer.send(again.reply_channel, transcript_of(again, "second worker"))
        return again.attempt

    answering = asyncio.ensure_future(dies_then_answers())
    transcript = await workers.recognize(TINY_PCM, AsrOptions())
    assert transcript.text == "second worker"
    assert await answering == 2


async def test_requests_beyond_the_bound_wait_for_a_slot_and_are_reported_if_none_frees(
    no_models,
):
    layer = InMemoryChannelLayer()
    # The held request's own timeout counts its 10 s of audio; a slot is waited for 0.2 s.
    workers = Workers(layer, in_flight=1, timeout_s=0.2)
    held = asyncio.ensure_future(workers.recognize(bytes(320_000), AsrOptions()))
    holding = await take(layer)
    with pytest.raises(SpeechUnavailable) as raised:
        await workers.recognize(TINY_PCM, AsrOptions())
    assert "already in flight" in raised.value.reason
    assert SPEECH_CHANNELS["asr"] not in layer.channels  # the refused request was never sent
    await layer.send(holding.reply_channel, transcript_of(holding, "held"))
    assert (await held).text == "held"

    async def answer() -> None:
        asked = await take(layer)
        await layer.send(asked.reply_channel, transcript_of(asked, "after"))

    answering = asyncio.ensure_future(answer())
    assert (await workers.recognize(TINY_PCM, AsrOptions())).text == "after"
    await answering


async def test_many_simultaneous_requests_never_exceed_the_bound_and_all_are_answered(no_models):
    layer = CountingLayer()
    workers = Workers(layer, in_flight=2, timeout_s=30)

    async def worker() -> None:
        while True:
            asked = await take(layer)
            await asyncio.sleep(0)  # let the other callers pile up behind the bound
            await layer.send(asked.reply_channel, transcript_of(asked, asked.request_id))

    answering = asyncio.ensure_future(worker())
    try:
        transcripts = await asyncio.gather(
            *(workers.recognize(TINY_PCM, AsrOptions()) for _ in range(6))
        )
    finally:
        answering.cancel()
    assert len({t.text for t in transcripts}) == 6
    assert layer.peak == 2


async def test_a_worker_failure_is_reported_at_once_with_its_reason(no_models):
    layer = InMemoryChannelLayer()
    workers = Workers(layer, in_flight=2, timeout_s=30)

    async def fails() -> None:
        asked = await take(layer)
        failed = {"type": "speech.failed", "request_id": asked.request_id, "reason": "boom"}
        await layer.send(asked.reply_channel, failed)

    failing = asyncio.ensure_future(fails())
    with pytest.raises(SpeechUnavailable, match="boom"):
        await workers.recognize(TINY_PCM, AsrOptions())
    await failing


async def test_a_channel_layer_that_cannot_send_is_reported_not_raised_through(no_models):
    class Unreachable(InMemoryChannelLayer):
        async def send(self, channel: str, message: dict[str, Any]) -> None:
            raise ConnectionError("Connection refused by 127.0.0.1:6379")

    workers = Workers(Unreachable(), in_flight=2, timeout_s=30)
    with pytest.raises(SpeechUnavailable, match="could not be sent: Connection refused") as raised:
        await workers.synthesize("Hello.")
    assert raised.value.kind == "tts_unavailable"
