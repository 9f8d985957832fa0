"""Scale benchmark: simultaneous typed runs and voice calls, one process on SQLite against N web
processes + M speech workers on PostgreSQL + Redis behind nginx (both started by lab.cluster).

Run: .venv/bin/python -m benchmarks.bench_scale [--quick] [--web N] [--speech M]
Every client is a real one on loopback: HTTP to start the run, its WebSocket to drive it (typed:
the scripted caller; voice: piper-synthesized caller lines streamed at a microphone's pace).
Reports correct runs (verdict PASS) out of N, run duration, and for voice end of caller speech
→ first agent audio (turn.latency total) and the caller-heard voice-to-voice time, p50 / p95.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import platform
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_STATE = Path(tempfile.mkdtemp(prefix="bench-scale-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
# This process only synthesizes caller lines and evaluates logs; the servers have their own.
os.environ["DATABASE_URL"] = f"sqlite:///{_STATE}/client.sqlite3"
os.environ.pop("REDIS_URL", None)

import django  # noqa: E402

django.setup()

from lab.cluster.calls import SILENCE, Microphone, Window, run_events, start_run  # noqa: E402
from lab.cluster.processes import free_port  # noqa: E402
from lab.cluster.topology import Backing, Lab, Shape  # noqa: E402
from lab.evaluation.evaluator import evaluate  # noqa: E402
from lab.evaluation.verdicts import Verdict  # noqa: E402
from lab.events.types import TurnLatency  # noqa: E402
from lab.scenarios.catalog import contract_get  # noqa: E402
from lab.speech import tts  # noqa: E402

SCENARIO = "correction"
VOICE_LINES = (
    "I'd like an appointment on Tuesday morning.",
    "Actually, make that Friday afternoon.",
    "Yes, book it.",
)
# Typed runs on the compressed conversation clock, as the issue measured them.
TYPED_ENV = {"LAB_TIME_SCALE": "0.1", "LAB_TOOL_TIMEOUT_MS": "5000"}
# The line a speech worker logs for each batch of recognitions (lab/speech/worker.py).
_BATCH_LOG = re.compile(r"speech worker: (\d+) recognitions in one batch")
RUN_LIMIT_S = 240.0  # a call still going after this counts as failed (TimeoutError)
ENDED_POLLS = 30


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Outcome:
    correct: bool
    duration_s: float
    turns: list[TurnLatency] = field(default_factory=list)
    problem: str = ""


async def _finish(port: int, run_id: str, cookie: str, started: float) -> Outcome:
    duration = time.monotonic() - started
    # The final fragment can come before run.ended is read back: give the log a moment.
    for _ in range(ENDED_POLLS):
        events = await asyncio.to_thread(run_events, port, run_id, cookie)
        if any(e.type == "run.ended" for e in events):
            break
        await asyncio.sleep(1.0)
    verdict = evaluate(contract_get(SCENARIO), events).verdict
    turns = [e.payload for e in events if isinstance(e.payload, TurnLatency)]
    return Outcome(verdict is Verdict.PASS, duration, turns, verdict.value)


async def typed_run(port: int) -> Outcome:
    started = time.monotonic()
    run_id, cookie = await asyncio.to_thread(start_run, port, SCENARIO, "typed")
    window = await Window.open(port, run_id, cookie)
    try:
        await window.until('data-role="driver"')
        await window.send({"action": "play"})
        await window.until('data-final="true"')
        return await _finish(port, run_id, cookie, started)
    finally:
        await window.close()


async def voice_call(port: int, lines: Sequence[bytes]) -> Outcome:
    started = time.monotonic()
    run_id, cookie = await asyncio.to_thread(start_run, port, SCENARIO, "voice")
    window = await Window.open(port, run_id, cookie)
    microphone: Microphone | None = None
    try:
        await window.until('data-role="driver"')
        await window.until_agent_speaks()
        microphone = Microphone(window)
        for pcm in lines:
            await microphone.hear_out()
            heard = window.agent_audio_s
            await microphone.speak(pcm)
            await window.until_agent_speaks(beyond_s=heard)
        await microphone.hear_out()
        await microphone.stop()
        await window.send({"action": "end"})
        await window.until('data-final="true"')
        # The window stays open until run.ended is stored: closing it could leave the run
        # waiting out its reconnect grace instead.
        return await _finish(port, run_id, cookie, started)
    finally:
        if microphone is not None:
            await microphone.stop()
        await window.close()


async def guarded(call: asyncio.Future[Outcome] | asyncio.Task[Outcome]) -> Outcome:
    started = time.monotonic()
    try:
        async with asyncio.timeout(RUN_LIMIT_S):
            return await call
    except Exception as error:
        return Outcome(False, time.monotonic() - started, problem=type(error).__name__)


async def round_of(count: int, port: int, voice: Sequence[bytes] | None) -> list[Outcome]:
    calls = [
        asyncio.ensure_future(voice_call(port, voice) if voice else typed_run(port))
        for _ in range(count)
    ]
    return list(await asyncio.gather(*(guarded(call) for call in calls)))


def row(label: str, count: int, outcomes: list[Outcome], *, voice: bool) -> str:
    correct = sum(o.correct for o in outcomes)
    durations = [o.duration_s for o in outcomes]
    problems = sorted({o.problem for o in outcomes if not o.correct})
    cells = [
        label,
        str(count),
        f"{correct}/{count}",
        f"{statistics.median(durations):.1f} / {max(durations):.1f}",
    ]
    if voice:
        totals = [t.total_ms for o in outcomes for t in o.turns]
        heard = [t.voice_to_voice_ms for o in outcomes for t in o.turns if t.voice_to_voice_ms]
        for values in (totals, heard):
            cells.append(
                f"{statistics.median(values):.0f} / {pct(values, 0.95):.0f}" if values else "n/a"
            )
    cells.append(", ".join(problems) or "")
    return "| " + " | ".join(cells) + " |"


def worker_batches(state: Path) -> list[int]:
    """The sizes of the batches of 2+ the speech workers logged so far (lab/speech/worker.py)."""
    logs = sorted(state.glob("speech-*.log"))
    return [int(size) for log in logs for size in _BATCH_LOG.findall(log.read_text("replace"))]


async def measure(
    label: str,
    port: int,
    typed: list[int],
    voice: list[int],
    lines: list[bytes],
    batches: Callable[[], list[int]] | None = None,
) -> None:
    print(f"\n### {label}\n")
    print("| set-up | runs | correct | duration p50 / max s | problems |")
    print("| --- | --- | --- | --- | --- |")
    for count in typed:
        print(row(f"typed, {label}", count, await round_of(count, port, None), voice=False))
    print(
        "\n| set-up | calls | correct | duration p50 / max s | end of speech → first audio "
        "p50 / p95 ms | voice-to-voice p50 / p95 ms | problems | worker batches of 2+ (largest) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for count in voice:
        before = len(batches()) if batches else 0
        outcomes = await round_of(count, port, lines)
        new = batches()[before:] if batches else []
        print(row(f"voice, {label}", count, outcomes, voice=True), end="")
        print(f" {len(new)} ({max(new, default=1)}) |" if batches else " n/a |")


def counts(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(options: argparse.Namespace) -> None:
    typed = [8] if options.quick else options.typed
    voice = [1, 2] if options.quick else options.voice
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; scenario {SCENARIO}"
    )
    lines = [tts.synthesize(text) + SILENCE * 40 for text in VOICE_LINES]
    env = dict(TYPED_ENV)
    if not options.scaled_only:
        one = Shape(web=1, speech=0, port=0)
        sqlite = f"sqlite:///{_STATE}/one.sqlite3"
        with Lab(_STATE / "one", one, sqlite, None, extra_env=env) as lab:
            asyncio.run(measure("1 process, SQLite", lab.web_ports[0], typed, voice, lines))
    shape = Shape(web=options.web, speech=options.speech, port=free_port())
    label = f"{shape.web} web + {shape.speech} speech, PostgreSQL + Redis"
    with (
        Backing() as backing,
        Lab(_STATE / "scaled", shape, backing.postgres.url(), backing.redis.url, env) as lab,
    ):
        scaled = functools.partial(worker_batches, lab.state)
        asyncio.run(measure(label, shape.port, typed, voice, lines, scaled))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="8 typed runs, 1 and 2 calls")
    parser.add_argument("--web", type=int, default=2, help="web processes in the scaled set-up")
    parser.add_argument("--speech", type=int, default=1, help="speech workers in it")
    parser.add_argument("--scaled-only", action="store_true", help="skip the one-process run")
    parser.add_argument("--typed", type=counts, default=[24, 96], help="typed rounds, e.g. 24,96")
    parser.add_argument("--voice", type=counts, default=[1, 4, 8], help="voice rounds, e.g. 1,4,8")
    main(parser.parse_args())
