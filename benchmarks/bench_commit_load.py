"""Commit load benchmark: N simultaneous typed calls at real time; when do real commits time out?

Run: .venv/bin/python -m benchmarks.bench_commit_load [--levels 10,20,40,80] [--budget-s 900]
Each level plays N double-confirmation calls at once through the real consumer path
(LAB_TIME_SCALE=1, the default LAB_TOOL_TIMEOUT_MS). It reports, per level, the commit latency
(tool.commit.started to its outcome) p50/p95/max, how many commits outlived the timeout
(tool.commit.uncertain), and whether the log ever contradicted the sandbox. It stops after the
first level with a timed-out commit, or when the budget is spent. Not part of make test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from typing import Any

_STATE = tempfile.mkdtemp(prefix="bench-commit-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
os.environ["DATABASE_URL"] = f"sqlite:///{_STATE}/bench.sqlite3"
os.environ["LAB_STATE_DIR"] = _STATE
os.environ["LAB_TIME_SCALE"] = "1"

import django  # noqa: E402

django.setup()

from channels.db import database_sync_to_async  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from lab.evaluation.evaluator import evaluate  # noqa: E402
from lab.events import store  # noqa: E402
from lab.events.models import Run  # noqa: E402
from lab.events.types import (  # noqa: E402
    Channel,
    CommitFailed,
    CommitReconciled,
    CommitStarted,
    CommitSucceeded,
    Event,
    Mode,
)
from lab.runs.services import run_start  # noqa: E402
from lab.scenarios.catalog import contract_get  # noqa: E402
from lab.tools.models import ToolExecution  # noqa: E402
from lab.web.management.headless import play_headless  # noqa: E402

SCENARIO = "double_confirmation"
STAGGER_S = 0.02
OUTCOMES = (CommitSucceeded, CommitFailed, CommitReconciled)


async def staggered(run: Run, delay_s: float) -> None:
    # play_headless allows 1 s to connect; N connections at the same instant would exceed it.
    await asyncio.sleep(delay_s)
    await play_headless(run)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values) or [0.0]
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def commit_latencies_ms(events: list[Event]) -> list[float]:
    started = {e.payload.attempt_id: e.at for e in events if isinstance(e.payload, CommitStarted)}
    return [
        (e.at - started[e.payload.attempt_id]).total_seconds() * 1000
        for e in events
        if isinstance(e.payload, OUTCOMES) and e.payload.attempt_id in started
    ]


def contradictions(run: Run, events: list[Event]) -> int:
    """Receipts the sandbox holds that the log never names, plus failures told for executed keys."""
    held = set(
        ToolExecution.objects.filter(run=run, voided=False).values_list("receipt_id", flat=True)
    )
    named = {
        e.payload.receipt.receipt_id
        for e in events
        if isinstance(e.payload, CommitSucceeded | CommitReconciled) and e.payload.receipt
    }
    told_failed = sum(
        1
        for e in events
        if isinstance(e.payload, CommitFailed) and e.payload.failure_kind == "timeout"
    )
    return len(held - named) + (told_failed if held else 0)


async def level(n: int) -> dict[str, Any]:
    runs = [
        await database_sync_to_async(run_start)(
            scenario_id=SCENARIO, mode=Mode.GUARDED, channel=Channel.TYPED
        )
        for _ in range(n)
    ]
    began = time.monotonic()
    await asyncio.gather(*(staggered(run, i * STAGGER_S) for i, run in enumerate(runs)))
    wall = time.monotonic() - began
    contract = contract_get(SCENARIO)
    latencies, uncertain, contradicted, passed = [], 0, 0, 0
    others: dict[str, int] = {}
    for run in runs:
        events = await database_sync_to_async(store.run_events)(run)
        latencies += commit_latencies_ms(events)
        uncertain += sum(1 for e in events if e.type == "tool.commit.uncertain")
        contradicted += await database_sync_to_async(contradictions)(run, events)
        evaluation = evaluate(contract, events)
        if evaluation.verdict.value == "PASS":
            passed += 1
        else:
            why = f"{evaluation.verdict.value} {evaluation.reason_kind}"
            others[why] = others.get(why, 0) + 1
    return {
        "n": n,
        "wall_s": wall,
        "p50": pct(latencies, 0.5),
        "p95": pct(latencies, 0.95),
        "max": max(latencies, default=0.0),
        "uncertain": uncertain,
        "contradicted": contradicted,
        "passed": passed,
        "others": others,
    }


async def main(levels: list[int], budget_s: float) -> None:
    timeout_ms = settings.LAB_TOOL_TIMEOUT_MS
    cores = os.cpu_count()
    print(f"{SCENARIO}, typed, LAB_TIME_SCALE=1, LAB_TOOL_TIMEOUT_MS={timeout_ms}, {cores} cores")
    print(" N   wall s  commit p50 / p95 / max ms  uncertain  contradicted  PASS")
    began = time.monotonic()
    for n in levels:
        row = await level(n)
        print(
            f"{row['n']:3d}  {row['wall_s']:6.1f}  {row['p50']:7.0f} / {row['p95']:5.0f} / "
            f"{row['max']:5.0f}      {row['uncertain']:4d}       {row['contradicted']:4d}"
            f"     {row['passed']:3d}/{n}  {row['others'] or ''}"
        )
        if row["uncertain"] or time.monotonic() - began > budget_s:
            break


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="10,20,40,80,120")
    parser.add_argument("--budget-s", type=float, default=900.0)
    options = parser.parse_args()
    call_command("migrate", "--noinput", verbosity=0)
    asyncio.run(main([int(n) for n in options.levels.split(",")], options.budget_s))
