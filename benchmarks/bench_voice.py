"""Voice benchmark: the scripted caller on the real models, through the real consumer path.

Run: .venv/bin/python -m benchmarks.bench_voice [--quick] [--calls 1,4,8 [--first-come]
[--fallbacks-alone]]
(`make bench-voice` runs `--calls 1,4,8` after bench_side_by_side.)
Reports voice-to-voice latency per turn, p50 and p95, from the caller's last voiced sample in
the audio (the last sample above -40 dBFS, as a caller hears it; webrtcvad's last voiced frame
runs on ~135 ms past it) to the first agent audio frame sent; the chain behind it (candidate
pause, turn decision, recognition, agent, first chunk); scripted lines split into more than one
turn; the ASR real-time factor; peak memory; and for simultaneous calls their p95, turns missed,
recognition batches and the event loop's lag beside an idle baseline taken in the same run, with
issue 28's capacity aims met or missed.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import platform
import resource
import statistics
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np

_STATE = tempfile.mkdtemp(prefix="bench-voice-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
os.environ["DATABASE_URL"] = f"sqlite:///{_STATE}/bench.sqlite3"
os.environ["LAB_STATE_DIR"] = _STATE

import django  # noqa: E402

django.setup()

from channels.db import database_sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from benchmarks.voice_aims import CALLS_P95_MS, calls_aims, calls_held, pct  # noqa: E402
from lab.events import store  # noqa: E402
from lab.events.types import Channel, Event, Mode, Transcribed, TurnLatency  # noqa: E402
from lab.runs.services import run_start  # noqa: E402
from lab.scenarios.catalog import all_contracts  # noqa: E402
from lab.scripted.fixed_lines import fixed_lines  # noqa: E402
from lab.speech import asr, service, smart_turn, tts  # noqa: E402
from lab.speech.protocol import AsrOptions  # noqa: E402
from lab.speech.windowing import FULL_WINDOW_FRAMES  # noqa: E402
from lab.web.management.headless import play_headless  # noqa: E402

RTF: list[float] = []
# Per recognition call: how many of its segments were heard on the full 30 s window.
FULL_WINDOWS: list[int] = []
_transcribe_many = asr.transcribe_many
LAG_PERIOD_S = 0.01


def _timed_transcribe_many(
    pcms: Sequence[bytes], *, prompt_free: bool = False
) -> list[asr.Transcript]:
    transcripts = _transcribe_many(pcms, prompt_free=prompt_free)
    # A batch's time is shared: each segment's share of it against its audio.
    RTF.extend(t.elapsed_ms / len(pcms) / max(t.audio_ms, 1) for t in transcripts)
    FULL_WINDOWS.append(sum(t.window_ms == FULL_WINDOW_FRAMES * 10 for t in transcripts))
    return transcripts


asr.transcribe_many = _timed_transcribe_many


class LoopLag:
    """How late the event loop wakes a 10 ms sleeper: what heavy work on the loop costs others."""

    def __init__(self) -> None:
        self.lags_ms: list[float] = []
        self.task = asyncio.ensure_future(self._probe())

    async def _probe(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            began = loop.time()
            await asyncio.sleep(LAG_PERIOD_S)
            self.lags_ms.append((loop.time() - began - LAG_PERIOD_S) * 1000)

    def stop(self) -> str:
        self.task.cancel()
        lags = self.lags_ms or [0.0]
        return f"{statistics.median(lags):.1f} / {pct(lags, 0.95):.1f} / {max(lags):.0f}"


async def warmed_up() -> None:
    """The state a serving process reaches after warm-up: the models loaded and every fixed
    line in an otherwise empty phrase cache, with no background synthesis left to compete
    (it would slow only the first pass or count measured)."""
    service.sentence_pcm.cache_clear()
    await service.warm()
    for line in fixed_lines():
        for chunk in tts.chunks(line):
            await service.synthesize(chunk)


async def play_events(scenario_id: str) -> list[Event]:
    """Play one scenario guarded over voice headless; its whole event log."""
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=Mode.GUARDED, channel=Channel.VOICE
    )
    await play_headless(run)
    return await database_sync_to_async(store.run_events)(run)


async def play(scenario_id: str) -> list[TurnLatency]:
    events = await play_events(scenario_id)
    return [e.payload for e in events if isinstance(e.payload, TurnLatency)]


@contextmanager
def configured(**overrides: object) -> Iterator[None]:
    saved = {name: getattr(settings, name) for name in overrides}
    for name, value in overrides.items():
        setattr(settings, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(settings, name, value)


def split_lines(events: list[Event], scenario_id: str) -> int:
    """Scripted lines heard as more than one turn: transcribed turns beyond the script's lines."""
    turns = sum(
        1
        for e in events
        if isinstance(e.payload, Transcribed) and any(ch.isalnum() for ch in e.payload.text)
    )
    return max(0, turns - len(all_contracts()[scenario_id].caller))


async def play_all(scenarios: list[str]) -> tuple[list[TurnLatency], int]:
    """Every scenario once: its turns' latency chains and how many lines were split."""
    turns, split = [], 0
    for scenario_id in scenarios:
        events = await play_events(scenario_id)
        turns += [e.payload for e in events if isinstance(e.payload, TurnLatency)]
        split += split_lines(events, scenario_id)
    return turns, split


def summarize(label: str, turns: list[TurnLatency], split: int) -> str:
    def cell(values: Sequence[int]) -> str:
        return f"{statistics.median(values):.0f} / {pct(values, 0.95):.0f}"

    decided = [t for t in turns if t.speculative]
    return (
        f"| {label} | {len(turns)} | {split} | {cell([t.voice_to_voice_ms for t in turns])} | "
        f"{cell([t.total_ms for t in turns])} | {len(decided)} | "
        f"{cell([t.endpointing_ms for t in turns])} | "
        f"{cell([t.decision_ms for t in decided] or [0])} | "
        f"{cell([t.recognition_tail_ms for t in decided] or [0])} | "
        f"{cell([t.recognition_ms for t in turns])} | "
        f"{cell([t.agent_ms for t in turns])} | {cell([t.synthesis_ms for t in turns])} |"
    )


async def compare_levers(scenarios: list[str]) -> None:
    print(
        "| configuration | turns | lines split | heard p50 / p95 ms (last voiced sample → "
        "first audio) | webrtcvad end → first audio | decided at a candidate | end declared "
        "(audio ms after webrtcvad's end) | candidate → decided | candidate → transcript "
        "| recognition after the end | agent | first chunk |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    levers: list[tuple[str, dict[str, object]]] = [
        ("defaults (200 ms candidate, smart-turn + words, 500 ms fallback)", {}),
        ("candidate with words only (no turn model)", {"LAB_TURN_MODEL": False}),
        (
            "silence only, 500 ms (early ASR after 200 ms: the lab before)",
            {"LAB_TURN_CANDIDATE_MS": 0, "LAB_ASR_EARLY_MS": 200},
        ),
    ]
    for label, overrides in levers:
        # Each configuration starts cold, so none inherits the phrases another one cached.
        service.sentence_pcm.cache_clear()
        with configured(**overrides):
            turns, split = await play_all(scenarios)
        print(summarize(label, turns, split))
    cached = service.sentence_pcm
    service.sentence_pcm = functools.lru_cache(maxsize=0)(tts.synthesize)
    try:
        turns, split = await play_all(scenarios)
        print(summarize("defaults without the phrase cache", turns, split))
    finally:
        service.sentence_pcm = cached
    print(
        f"\nASR real-time factor (model time / audio): p50 {statistics.median(RTF):.2f}, "
        f"p95 {pct(RTF, 0.95):.2f} over {len(RTF)} segments"
    )


@contextmanager
def first_come_recognition() -> Iterator[None]:
    """The lab before its recognition scheduler: one first-come executor for every decode."""
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="asr-fifo")
    scheduled = service.InProcess.recognize

    async def recognize(self: service.InProcess, pcm: bytes, options: AsrOptions) -> asr.Transcript:
        call = functools.partial(asr.transcribe, pcm, **options.keywords())
        return await asyncio.get_running_loop().run_in_executor(executor, call)

    service.InProcess.recognize = recognize  # type: ignore[method-assign]
    try:
        yield
    finally:
        service.InProcess.recognize = scheduled  # type: ignore[method-assign]
        executor.shutdown()


@contextmanager
def fallbacks_alone() -> Iterator[None]:
    """The lab before its batched fallbacks: each full-window decode on its own."""
    batched = asr.decode_full_many

    def alone(audios: Sequence[np.ndarray], *, prompt_free: bool = False) -> list[str]:
        return [asr.decode_full(audio, prompt_free=prompt_free) for audio in audios]

    asr.decode_full_many = alone
    try:
        yield
    finally:
        asr.decode_full_many = batched


async def find_capacity(
    counts: Sequence[int], *, stop: bool, first_come: bool, alone: bool = False
) -> None:
    await warmed_up()
    # The loop's lag with no call running, in this process on this machine now: the baseline.
    idle = LoopLag()
    await asyncio.sleep(3)
    print(f"\nevent-loop lag, no call (p50 / p95 / max ms): {idle.stop()}")
    print(
        "\n| simultaneous calls | recognition | turns | missed | heard p50 / p95 ms "
        "| recognition after the end p50 / p95 ms | batches of 2+ (largest) "
        "| full-window decodes (2+ in one recognition call) "
        "| event-loop lag p50 / p95 / max ms | load average before |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    p95s: dict[int, float] = {}
    missed: dict[int, int] = {}
    for calls in counts:
        # Interleaved with the scheduler's run, so both see the same load on a shared machine.
        if first_come:
            with first_come_recognition():
                await capacity_row(calls, "first come")
        if alone:
            with fallbacks_alone():
                await capacity_row(calls, "fallbacks alone")
        p95s[calls], missed[calls] = await capacity_row(calls, "scheduled")
        if stop and p95s[calls] > CALLS_P95_MS:
            break
    print(
        f"\nsimultaneous calls held with p95 ≤ {CALLS_P95_MS} ms: {calls_held(p95s)} "
        f"(tried {', '.join(map(str, p95s))}); load average at the end {os.getloadavg()[0]:.2f}"
    )
    print("Issue 28's capacity aims:")
    for aim in calls_aims(p95s, missed):
        print(aim.line())


async def capacity_row(calls: int, label: str) -> tuple[float, int]:
    """Play `calls` correction scenarios at once; print their row; the p95 and turns missed."""
    # Other work on the machine moves these figures: say how busy it was.
    load = os.getloadavg()[0]
    batches = service.recognizer().batch_sizes
    batched_before, full_before = len(batches), len(FULL_WINDOWS)
    lag = LoopLag()
    results = await asyncio.gather(*(play("correction") for _ in range(calls)))
    lags = lag.stop()
    turns = [t for played in results for t in played]
    totals: list[float] = [t.voice_to_voice_ms for t in turns] or [float("nan")]
    waits = [t.recognition_ms for t in turns] or [0]
    missed = max(0, calls * len(all_contracts()["correction"].caller) - len(turns))
    p95 = pct(totals, 0.95)
    sizes = batches[batched_before:]
    fulls = FULL_WINDOWS[full_before:]
    print(
        f"| {calls} | {label} | {len(turns)} | {missed} | {statistics.median(totals):.0f} / "
        f"{p95:.0f} | {statistics.median(waits):.0f} / {pct(waits, 0.95):.0f} "
        f"| {sum(size > 1 for size in sizes)} ({max(sizes, default=0)}) "
        f"| {sum(fulls)} ({sum(n for n in fulls if n > 1)}) | {lags} | {load:.2f} |"
    )
    return p95, missed


async def main(options: argparse.Namespace) -> None:
    scenarios = ["correction"] if options.quick else sorted(all_contracts())
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    if not options.calls_only:
        print(f"scenarios: {', '.join(scenarios)}\n")
        await compare_levers(scenarios)
    if not options.levers_only:
        counts = options.calls or list(range(1, options.max_calls + 1))
        await find_capacity(
            counts,
            stop=options.calls is None,
            first_come=options.first_come,
            alone=options.fallbacks_alone,
        )
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory: {peak_mib:.0f} MiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the correction scenario only")
    parser.add_argument("--max-calls", type=int, default=8, help="most simultaneous calls tried")
    parser.add_argument(
        "--calls",
        type=lambda text: [int(n) for n in text.split(",")],
        help="only these numbers of simultaneous calls, e.g. 1,4,8 (implies --calls-only)",
    )
    parser.add_argument(
        "--first-come",
        action="store_true",
        help="before each count, the same calls on a first-come ASR thread (the lab before)",
    )
    parser.add_argument(
        "--fallbacks-alone",
        action="store_true",
        help="before each count, the same calls with each full-window decode alone (as before)",
    )
    parser.add_argument("--levers-only", action="store_true", help="skip the concurrency test")
    parser.add_argument("--calls-only", action="store_true", help="only the concurrency test")
    options = parser.parse_args()
    options.calls_only = options.calls_only or options.calls is not None
    call_command("migrate", verbosity=0)
    asr.load_model()
    tts.load_voice()
    smart_turn.load()
    asyncio.run(main(options))
