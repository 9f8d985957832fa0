"""The speech worker batches recognitions waiting together, and answers each asker alone."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from channels.layers import InMemoryChannelLayer

from lab.speech import asr
from lab.speech.protocol import SPEECH_CHANNELS, AsrOptions, AsrRequest
from lab.speech.worker import SpeechWorker

# Long enough that a worker waiting it out would fail the test's own timeout.
NEVER_S = 60.0


class Models:
    """A worker's models that record every recognition call; the words are the PCM's bytes."""

    def __init__(self, *, broken: bool = False) -> None:
        self.calls: list[tuple[str, list[bytes], bool]] = []
        self.broken = broken

    async def warm(self) -> None:
        return None

    async def presynthesize(self, lines: list[str]) -> None:
        return None

    async def warm_turn_model(self) -> None:
        return None

    async def recognize(self, pcm: bytes, options: AsrOptions) -> asr.Transcript:
        self.calls.append(("one", [pcm], options.prompt_free))
        return heard(pcm)

    async def recognize_many(self, pcms: list[bytes], options: AsrOptions) -> list[asr.Transcript]:
        self.calls.append(("many", pcms, options.prompt_free))
        if self.broken:
            raise RuntimeError("the model file is damaged")
        return [heard(pcm) for pcm in pcms]

    async def synthesize(self, text: str) -> bytes:
        return b""

    async def turn_probability(self, pcm: bytes) -> float:
        return 0.5


def heard(pcm: bytes) -> asr.Transcript:
    return asr.Transcript(text=pcm.decode(), audio_ms=len(pcm), elapsed_ms=1)


async def ask(
    layer: InMemoryChannelLayer, words: str, *, prompt_free: bool = False, expired: bool = False
) -> str:
    """Queue one recognition request for the workers; returns the asker's reply channel."""
    inbox = await layer.new_channel()
    request = AsrRequest(
        request_id=f"id-{words}",
        reply_channel=inbox,
        attempt=1,
        deadline=time.time() + (-1 if expired else NEVER_S),
        pcm=words.encode(),
        options=AsrOptions(prompt_free=prompt_free),
    )
    await layer.send(SPEECH_CHANNELS["asr"], request.model_dump())
    return inbox


async def reply(layer: InMemoryChannelLayer, inbox: str) -> dict[str, Any]:
    async with asyncio.timeout(NEVER_S / 2):
        return await layer.receive(inbox)


@contextlib.asynccontextmanager
async def serving(layer: Any, worker: SpeechWorker) -> AsyncIterator[SpeechWorker]:
    task = asyncio.ensure_future(worker.serve())
    try:
        yield worker
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_requests_waiting_together_are_recognized_in_one_call_each_answered_alone():
    layer, models = InMemoryChannelLayer(), Models()
    # Already queued when the worker frees: they are taken at once, none waits out the window.
    inboxes = {words: await ask(layer, words) for words in ("one", "two", "three")}
    stale = await ask(layer, "stale", expired=True)
    await layer.send(SPEECH_CHANNELS["asr"], {"type": "asr.request", "pcm": b"malformed"})
    worker = SpeechWorker(layer, models=models, batch_max=5, collect_s=NEVER_S)
    async with serving(layer, worker):
        replies = {words: await reply(layer, inbox) for words, inbox in inboxes.items()}
    assert models.calls == [("many", [b"one", b"two", b"three"], False)]
    for words, answer in replies.items():
        assert (answer["type"], answer["request_id"], answer["text"]) == (
            "asr.reply",
            f"id-{words}",
            words,
        )
    assert stale not in layer.channels  # its asker had given up: no answer was sent
    assert worker.batch_sizes == {3: 1}


async def test_a_batch_the_model_fails_answers_every_asker_with_the_failure():
    layer, models = InMemoryChannelLayer(), Models(broken=True)
    inboxes = [await ask(layer, words) for words in ("one", "two")]
    async with serving(layer, SpeechWorker(layer, models=models, batch_max=2, collect_s=NEVER_S)):
        replies = [await reply(layer, inbox) for inbox in inboxes]
    assert [(r["type"], r["request_id"]) for r in replies] == [
        ("speech.failed", "id-one"),
        ("speech.failed", "id-two"),
    ]
    assert all("the model file is damaged" in r["reason"] for r in replies)


async def test_requests_of_other_options_are_never_batched_with_the_first():
    layer, models = InMemoryChannelLayer(), Models()
    first = await ask(layer, "first")
    odd = await ask(layer, "odd", prompt_free=True)
    third = await ask(layer, "third")
    async with serving(layer, SpeechWorker(layer, models=models, batch_max=3, collect_s=NEVER_S)):
        texts = [(await reply(layer, inbox))["text"] for inbox in (first, odd, third)]
    assert texts == ["first", "odd", "third"]
    assert models.calls == [("many", [b"first", b"third"], False), ("one", [b"odd"], True)]


async def test_a_lone_request_waits_no_longer_than_the_collection_window():
    layer, models = InMemoryChannelLayer(), Models()
    worker = SpeechWorker(layer, models=models, batch_max=4, collect_s=0.05)
    async with serving(layer, worker):
        answer = await reply(layer, await ask(layer, "alone"))
    assert answer["text"] == "alone"
    assert models.calls == [("one", [b"alone"], False)]  # alone: exactly today's path
    assert worker.batch_sizes == {1: 1}


async def test_one_at_a_time_when_batching_is_off():
    layer, models = InMemoryChannelLayer(), Models()
    inboxes = [await ask(layer, words) for words in ("one", "two")]
    async with serving(layer, SpeechWorker(layer, models=models, batch_max=1, collect_s=NEVER_S)):
        assert [(await reply(layer, inbox))["text"] for inbox in inboxes] == ["one", "two"]
    assert [call[0] for call in models.calls] == ["one", "one"]
