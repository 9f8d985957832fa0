"""The recognition thread: what it runs next, and what it never runs."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

import pytest

from lab.speech.asr import Transcript
from lab.speech.recognizer import Asker, Recognizer


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
