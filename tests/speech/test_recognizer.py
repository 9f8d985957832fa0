"""The recognition thread: what it runs next, and what it never runs."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from lab.speech.asr import Transcript
from lab.speech.recognizer import Asker, Decode, Recognizer


class Model:
    """Stands in for the model call: records what ran, and can hold the thread on the first."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.started = threading.Event()
        self.release = threading.Event()

    def work(self, name: str, *, hold: bool = False) -> Callable[[], Transcript]:
        def run() -> Transcript:
            self.ran.append(name)
            if hold:
                self.started.set()
                self.release.wait(timeout=30)
            return Transcript(text=name, audio_ms=1000, elapsed_ms=1)

        return run


async def hold_the_thread(recognizer: Recognizer, model: Model) -> asyncio.Task[Transcript]:
    """A decode that keeps the thread busy until released, so the others queue behind it."""
    busy = asyncio.ensure_future(recognizer.run(model.work("busy", hold=True), Asker("z", True)))
    await asyncio.to_thread(model.started.wait, 30)
    return busy


async def test_a_final_runs_before_speculation_queued_ahead_of_it():
    recognizer, model = Recognizer(speculative_ttl_s=60), Model()
    busy = await hold_the_thread(recognizer, model)
    asks = [
        recognizer.run(model.work("a"), Asker("a", final=False)),
        recognizer.run(model.work("b"), Asker("b", final=False)),
        recognizer.run(model.work("c"), Asker("c", final=True)),
    ]
    tasks = [asyncio.ensure_future(ask) for ask in asks]
    await asyncio.sleep(0)  # let every ask reach the queue before the thread is freed
    model.release.set()
    texts = [t.text for t in await asyncio.gather(busy, *tasks)]
    assert texts == ["busy", "a", "b", "c"]  # each asker gets its own words
    assert model.ran == ["busy", "c", "a", "b"]


async def test_a_promoted_streams_speculation_runs_before_the_others():
    recognizer, model = Recognizer(speculative_ttl_s=60), Model()
    busy = await hold_the_thread(recognizer, model)
    tasks = [
        asyncio.ensure_future(recognizer.run(model.work(name), Asker(name, final=False)))
        for name in ("a", "b")
    ]
    await asyncio.sleep(0)
    recognizer.promote("b")
    model.release.set()
    await asyncio.gather(busy, *tasks)
    assert model.ran == ["busy", "b", "a"]


async def test_a_cancelled_ask_is_never_decoded():
    recognizer, model = Recognizer(speculative_ttl_s=60), Model()
    busy = await hold_the_thread(recognizer, model)
    stale = asyncio.ensure_future(recognizer.run(model.work("stale"), Asker("a", final=False)))
    fresh = asyncio.ensure_future(recognizer.run(model.work("fresh"), Asker("b", final=False)))
    await asyncio.sleep(0)
    stale.cancel()
    await asyncio.gather(stale, return_exceptions=True)
    model.release.set()
    await asyncio.gather(busy, fresh)
    assert model.ran == ["busy", "fresh"]


async def test_a_model_failure_reaches_its_asker_and_the_thread_goes_on():
    recognizer = Recognizer(speculative_ttl_s=60)

    def broken() -> Transcript:
        raise RuntimeError("the model file is damaged")

    with pytest.raises(RuntimeError, match="damaged"):
        await recognizer.run(broken, Asker("a", final=True))
    after = await recognizer.run(Model().work("after"), Asker("a", final=True))
    assert after.text == "after"


async def test_speculation_shed_under_load_yields_to_fresh_work_and_still_answers():
    clock = [0.0]
    recognizer, model = Recognizer(speculative_ttl_s=0.3, clock=lambda: clock[0]), Model()
    busy = await hold_the_thread(recognizer, model)
    shed = asyncio.ensure_future(recognizer.run(model.work("shed"), Asker("a", final=False)))
    await asyncio.sleep(0)
    clock[0] = 1.0  # the thread was busy past the speculation's use
    fresh = asyncio.ensure_future(recognizer.run(model.work("fresh"), Asker("b", final=False)))
    await asyncio.sleep(0)
    model.release.set()
    await asyncio.gather(busy, fresh)
    recognizer.promote("a")
    assert (await shed).text == "shed"
    assert model.ran == ["busy", "fresh", "shed"]


async def test_finals_of_several_calls_waiting_together_are_decoded_in_one_batch():
    batches: list[list[bytes]] = []

    def batch(decodes: list[Decode]) -> list[Transcript]:
        batches.append([d.pcm for d in decodes])
        return [Transcript(text=d.pcm.decode(), audio_ms=1000, elapsed_ms=1) for d in decodes]

    recognizer, model = Recognizer(speculative_ttl_s=60, batch=batch, batch_max=2), Model()
    busy = await hold_the_thread(recognizer, model)
    asks = [
        recognizer.run(model.work("spec"), Asker("s", final=False)),
        *(recognizer.run(Decode(name.encode()), Asker(name, final=True)) for name in "abcd"),
    ]
    tasks = [asyncio.ensure_future(ask) for ask in asks]
    await asyncio.sleep(0)
    model.release.set()
    texts = [t.text for t in await asyncio.gather(busy, *tasks)]
    assert texts == ["busy", "spec", "a", "b", "c", "d"]  # each asker gets its own words
    # Finals first, at most two a batch, in the order they became final; speculation last.
    assert batches == [[b"a", b"b"], [b"c", b"d"]]
    assert recognizer.batch_sizes == [1, 2, 2, 1]


async def test_a_lone_final_is_not_held_back_to_collect_a_batch():
    # collect_s is 30 s: were it waited out, the ask would time out.
    def batch(decodes: list[Decode]) -> list[Transcript]:
        return [Transcript(text="batched", audio_ms=1000, elapsed_ms=1) for _ in decodes]

    recognizer = Recognizer(speculative_ttl_s=60, batch=batch, batch_max=4, collect_s=30)
    alone = recognizer.run(Model().work("alone"), Asker("a", True))
    transcript = await asyncio.wait_for(alone, 10)
    assert transcript.text == "alone"
    assert recognizer.batch_sizes == [1]


async def test_decodes_queued_together_go_to_the_model_in_one_batch_without_waiting():
    batches: list[list[bytes]] = []

    def batch(decodes: list[Decode]) -> list[Transcript]:
        batches.append([d.pcm for d in decodes])
        return [Transcript(text=d.pcm.decode(), audio_ms=1000, elapsed_ms=1) for d in decodes]

    # collect_s is 30 s: were it waited out once all three are taken, the ask would time out.
    recognizer = Recognizer(speculative_ttl_s=60, batch=batch, batch_max=4, collect_s=30)
    together = recognizer.run_together([(Decode(n.encode()), Asker(n, True)) for n in "abc"])
    transcripts = await asyncio.wait_for(together, 10)
    assert [t.text for t in transcripts] == ["a", "b", "c"]
    assert batches == [[b"a", b"b", b"c"]]
    assert recognizer.batch_sizes == [3]
