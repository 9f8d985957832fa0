"""Connector overhead per turn: the lab's agent in process vs the same agent behind a connector.

Run: .venv/bin/python -m benchmarks.bench_connectors [--rounds 3] [--no-stream]
Plays every scenario on the typed channel (guarded, LAB_TIME_SCALE=0.1) with the scripted
agent in process and with `openai:` against the reference server (a subprocess on loopback),
and reads each agent turn from the log: from the caller.utterance to the agent's first and to
its last agent.utterance before the next caller turn. The difference is what the connector
(HTTP, JSON or SSE, the per-request history replay, the referee) adds. Not part of make test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass

_STATE = tempfile.mkdtemp(prefix="bench-connectors-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
os.environ["DATABASE_URL"] = f"sqlite:///{_STATE}/bench.sqlite3"
os.environ["LAB_STATE_DIR"] = _STATE
os.environ["LAB_TIME_SCALE"] = "0.1"

import django  # noqa: E402

django.setup()

from channels.db import database_sync_to_async  # noqa: E402
from django.core.management import call_command  # noqa: E402

from lab.connectors.registry import AgentSpec  # noqa: E402
from lab.events import store  # noqa: E402
from lab.events.types import AgentUtterance, CallerUtterance, Channel, Event, Mode  # noqa: E402
from lab.runs.services import run_start  # noqa: E402
from lab.scenarios.catalog import all_contracts  # noqa: E402
from lab.web.management.headless import play_headless  # noqa: E402


@dataclass
class Turns:
    first_ms: list[float]
    last_ms: list[float]


def turn_times(events: list[Event]) -> Turns:
    """Per caller turn answered: ms to the agent's first and last utterance of its reply."""
    turns = Turns([], [])
    heard: Event | None = None
    replies: list[Event] = []

    def close() -> None:
        if heard is not None and replies:
            turns.first_ms.append((replies[0].at - heard.at).total_seconds() * 1000)
            turns.last_ms.append((replies[-1].at - heard.at).total_seconds() * 1000)

    for event in events:
        if isinstance(event.payload, CallerUtterance):
            close()
            heard, replies = event, []
        elif isinstance(event.payload, AgentUtterance) and heard is not None:
            replies.append(event)
    close()
    return turns


async def play_all(agent: AgentSpec | None, rounds: int) -> Turns:
    total = Turns([], [])
    for _ in range(rounds):
        for scenario_id in sorted(all_contracts()):
            run = await database_sync_to_async(run_start)(
                scenario_id=scenario_id, mode=Mode.GUARDED, channel=Channel.TYPED, agent=agent
            )
            await play_headless(run)
            events = await database_sync_to_async(store.run_events)(run)
            turns = turn_times(events)
            total.first_ms += turns.first_ms
            total.last_ms += turns.last_ms
    return total


def _row(name: str, turns: Turns) -> str:
    def cell(values: list[float]) -> str:
        ordered = sorted(values)
        p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
        return f"{statistics.median(values):.0f} / {statistics.fmean(values):.0f} / {p90:.0f}"

    return f"| {name} | {len(turns.last_ms)} | {cell(turns.first_ms)} | {cell(turns.last_ms)} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-stream", action="store_true", help="whole replies, not SSE")
    args = parser.parse_args()
    if args.no_stream:
        os.environ["LAB_AGENT_STREAM"] = "0"
    call_command("migrate", verbosity=0)
    server = subprocess.Popen(
        [sys.executable, "-m", "lab.reference_agents.openai_server", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        spec = AgentSpec(connector="openai", endpoint=url, model="reference")
        in_process = asyncio.run(play_all(None, args.rounds))
        through = asyncio.run(play_all(spec, args.rounds))
    finally:
        server.terminate()
        server.wait()
    wire = "whole JSON" if args.no_stream else "SSE"
    print(f"agent turn, ms from caller.utterance (p50 / mean / p90), {args.rounds} rounds")
    print("| agent | turns | to first utterance | to last utterance |")
    print("| --- | --- | --- | --- |")
    print(_row("scripted, in process", in_process))
    print(_row(f"reference over openai: ({wire})", through))
    extra = statistics.median(through.last_ms) - statistics.median(in_process.last_ms)
    print(f"connector overhead per turn (p50 to last utterance): {extra:.0f} ms")


if __name__ == "__main__":
    main()
