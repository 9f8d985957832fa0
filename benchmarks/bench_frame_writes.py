"""Frame-path benchmark: how long each caller audio frame waits on the run log's writes.

Run: .venv/bin/python -m benchmarks.bench_frame_writes [--calls 4] [--slow-write-ms 0]
Plays `calls` guarded voice runs of `correction` at once on the real models, over SQLite, and
times every CallerAudio.push_audio call (one 20 ms frame: VAD, barge-in, the turn decision)
and every write the frame path itself awaited (vad.speech_started, vad.speech_ended,
turn.decided, ...), and each write it handed to the run's ordered writer instead, from hand-off
to stored (time the frame path no longer waits). --slow-write-ms makes every stored write that
much slower, as a loaded disk would. Prints the load average beside the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from benchmarks import bench_voice
from lab.audio import silero
from lab.events import store
from lab.events.types import EventPayload
from lab.runs.caller_audio import CallerAudio
from lab.runs.log import OrderedWriter
from lab.runs.session import RunSession
from lab.speech import asr, smart_turn, tts

# Frames being processed now, by the task processing them: a write awaited by one of these
# tasks is a write the frame path waits on.
_IN_FRAME: dict[asyncio.Task[Any], list[float]] = {}
FRAMES: list[float] = []
FRAMES_WRITING: list[float] = []
FRAMES_HANDING: list[float] = []
WRITES: dict[str, list[float]] = defaultdict(list)
HANDED: dict[str, list[float]] = defaultdict(list)
_HANDING: set[asyncio.Task[Any]] = set()


def _timed_frames() -> None:
    push = CallerAudio.push_audio
    record = RunSession.record
    follow = OrderedWriter.follow

    async def push_audio(self: CallerAudio, data: bytes) -> None:
        task = asyncio.current_task()
        assert task is not None
        _IN_FRAME[task] = []
        start = time.perf_counter()
        try:
            await push(self, data)
        finally:
            FRAMES.append((time.perf_counter() - start) * 1000)
            if _IN_FRAME.pop(task):
                FRAMES_WRITING.append(FRAMES[-1])
            if task in _HANDING:
                _HANDING.discard(task)
                FRAMES_HANDING.append(FRAMES[-1])

    async def timed_record(self: RunSession, payload: EventPayload) -> Any:
        waits = _IN_FRAME.get(asyncio.current_task())  # type: ignore[arg-type]
        start = time.perf_counter()
        try:
            return await record(self, payload)
        finally:
            if waits is not None:
                took = (time.perf_counter() - start) * 1000
                waits.append(took)
                WRITES[payload.type].append(took)

    def timed_follow(self: OrderedWriter, stored: asyncio.Task[Any]) -> Any:
        task = asyncio.current_task()
        if task in _IN_FRAME:
            _HANDING.add(task)
        start = time.perf_counter()

        def done(stored: asyncio.Task[Any]) -> None:
            if not stored.cancelled() and stored.exception() is None:
                HANDED[stored.result().type].append((time.perf_counter() - start) * 1000)

        stored.add_done_callback(done)
        return follow(self, stored)

    CallerAudio.push_audio = push_audio  # type: ignore[method-assign]
    OrderedWriter.follow = timed_follow  # type: ignore[method-assign]
    RunSession.record = timed_record  # type: ignore[method-assign]


def _slow_writes(delay_ms: int) -> None:
    append = store.event_append

    def slow_append(**kwargs: Any) -> Any:
        time.sleep(delay_ms / 1000)  # on the database thread, as a slow disk would be
        return append(**kwargs)

    store.event_append = slow_append


def row(label: str, values: Sequence[float]) -> str:
    if not values:
        return f"| {label} | 0 | - | - | - |"
    return (
        f"| {label} | {len(values)} | {statistics.median(values):.1f} "
        f"| {bench_voice.pct(values, 0.95):.1f} | {max(values):.1f} |"
    )


async def main(options: argparse.Namespace) -> None:
    before = os.getloadavg()
    await asyncio.gather(*(bench_voice.play("correction") for _ in range(options.calls)))
    after = os.getloadavg()
    print(
        f"{options.calls} simultaneous guarded voice runs of correction, "
        f"writes slowed by {options.slow_write_ms} ms; load average "
        f"{before[0]:.2f} before, {after[0]:.2f} after (1 min)\n"
    )
    print("| ms | count | p50 | p95 | max |")
    print("| --- | --- | --- | --- | --- |")
    print(row("every frame (push_audio)", FRAMES))
    print(row("frames that waited on a write", FRAMES_WRITING))
    print(row("frames that handed a write over", FRAMES_HANDING))
    print(row("writes the frame path awaited (all)", [w for ws in WRITES.values() for w in ws]))
    for kind in sorted(WRITES):
        print(row(f"… {kind}", WRITES[kind]))
    print(row("handed writes, hand-off → stored (all)", [w for ws in HANDED.values() for w in ws]))
    for kind in sorted(HANDED):
        print(row(f"… {kind}", HANDED[kind]))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=4, help="simultaneous voice runs")
    parser.add_argument("--slow-write-ms", type=int, default=0, help="added to every write")
    options = parser.parse_args()
    bench_voice.call_command("migrate", verbosity=0)
    asr.load_model()
    tts.load_voice()
    smart_turn.load()
    # Loaded by the first frame otherwise (a one-off stall of seconds, not a write's).
    silero.load()
    _timed_frames()
    if options.slow_write_ms:
        _slow_writes(options.slow_write_ms)
    asyncio.run(main(options))
