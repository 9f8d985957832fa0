"""What the MCP wire adds to one tool call: the same gated lookup made straight on the run's
ToolBox and through the SDK's own client over loopback HTTP.

Run: .venv/bin/python -m benchmarks.bench_mcp [--calls 300]
One outside-agent run of the correction scenario (guarded, SQLite), its GatedToolBox, and the
lab's ASGI app served by uvicorn in the same event loop (the ToolBox is a live object of the
session, so server and session share the process). Each call is check_availability through
the gate after a new caller request (the gate answers one read per request), recording its
events either way; the difference is the bearer check, HTTP and the
SDK's JSON-RPC on both ends. Not part of make test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator

_STATE = tempfile.mkdtemp(prefix="bench-mcp-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
os.environ["DATABASE_URL"] = f"sqlite:///{_STATE}/bench.sqlite3"
os.environ["LAB_STATE_DIR"] = _STATE

import django  # noqa: E402

django.setup()

from channels.db import database_sync_to_async  # noqa: E402
from django.core.management import call_command  # noqa: E402

from lab.connectors.interface import (  # noqa: E402
    AgentIdentity,
    AgentOutput,
    CallerTurn,
    ToolBox,
    ToolCall,
    TurnFinished,
)
from lab.connectors.mcp_access import mcp_token_issue  # noqa: E402
from lab.events.types import Channel, Mode  # noqa: E402
from lab.runs.external_turns import ExternalAgentTurns  # noqa: E402
from lab.runs.services import run_start  # noqa: E402
from lab.runs.session import RunSession  # noqa: E402
from lab.scenarios.catalog import contract_get  # noqa: E402
from tests.connectors.mcp_serving import lab_served, mcp_session, mcp_url  # noqa: E402

# The gate answers one read per request, so each call follows a new caller request.
REQUESTS = (
    ("Can I come in Thursday afternoon?", {"day": "thursday", "part_of_day": "afternoon"}),
    ("Actually, Friday morning instead.", {"day": "friday", "part_of_day": "morning"}),
)


class Quiet:
    """An outside agent that says nothing: the benchmark makes the calls itself."""

    identity = AgentIdentity(connector="mcp", endpoint="bench://quiet")

    async def greet(self, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        yield TurnFinished()

    async def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        yield TurnFinished()

    async def close(self) -> None:
        pass


def summary(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[int(len(ms) * 0.95) - 1]
    return f"{name:<28} {statistics.median(ms):8.2f} {p95:8.2f} {ms[-1]:8.2f}"


async def main(calls: int) -> None:
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    token = await database_sync_to_async(mcp_token_issue)(run=run)
    session = RunSession(run=run, contract=contract_get("correction"), agent=Quiet())
    await session.start()
    assert isinstance(session.turns, ExternalAgentTurns)
    toolbox = session.turns.toolbox
    direct: list[float] = []
    wire: list[float] = []
    async with lab_served() as base:
        began = time.perf_counter()
        async with mcp_session(mcp_url(base, str(run.id)), token) as client:
            opened = time.perf_counter() - began
            for n in range(calls):
                said, arguments = REQUESTS[0]
                await session.caller_says(said)
                began = time.perf_counter()
                result = await toolbox.call(
                    ToolCall(f"direct-{n}", "check_availability", arguments)
                )
                direct.append(time.perf_counter() - began)
                assert result.kind == "ok", result
                said, arguments = REQUESTS[1]
                await session.caller_says(said)
                began = time.perf_counter()
                answer = await client.call_tool("check_availability", arguments)
                wire.append(time.perf_counter() - began)
                assert not answer.is_error, answer
    await session.end(reason_kind="completed", reason="benchmark over")
    load = os.getloadavg()[0]
    print(
        f"{calls} gated check_availability calls each way, {os.cpu_count()} cores, load {load:.2f}"
    )
    print(f"{'':<28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    print(summary("ToolBox.call, in process", direct))
    print(summary("tools/call over MCP (HTTP)", wire))
    overhead = statistics.median(wire) - statistics.median(direct)
    print(
        f"MCP adds {overhead * 1000:.2f} ms per call at p50; initialize took {opened * 1000:.1f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    options = parser.parse_args()
    call_command("migrate", "--noinput", verbosity=0)
    asyncio.run(main(options.calls))
