"""This process's live runs for MCP: calls on one run are carried out one at a time, in order."""

from __future__ import annotations

import asyncio

from lab.connectors.interface import ToolCall, ToolResult
from lab.connectors.mcp_runs import McpRuns


class HeldToolBox:
    """Holds its first call until released, so a second call could overtake it if let."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = asyncio.Event()
        self.started: list[str] = []
        self.finished: list[str] = []

    async def call(self, call: ToolCall) -> ToolResult:
        self.started.append(call.call_id)
        self.entered.set()
        if call.call_id == "mcp-1":
            await self.release.wait()
        self.finished.append(call.call_id)
        return ToolResult(call.call_id, "ok")


async def test_a_second_call_on_a_run_waits_for_the_first_to_finish():
    runs, toolbox = McpRuns(), HeldToolBox()
    runs.open("r", toolbox)
    first = asyncio.ensure_future(runs.call("r", "book_appointment", {}))
    second = asyncio.ensure_future(runs.call("r", "book_appointment", {}))
    await toolbox.entered.wait()
    # Give the second call every chance to overtake the held first one.
    for _ in range(20):
        await asyncio.sleep(0)
    assert toolbox.started == ["mcp-1"]
    toolbox.release.set()
    assert [await first, await second] == [ToolResult("mcp-1", "ok"), ToolResult("mcp-2", "ok")]
    assert toolbox.finished == ["mcp-1", "mcp-2"]


async def test_a_run_let_go_or_never_held_has_no_toolbox_here():
    runs, toolbox, newer = McpRuns(), HeldToolBox(), HeldToolBox()
    assert await runs.call("r", "check_availability", {}) is None
    runs.open("r", toolbox)
    runs.open("r", newer)
    runs.close("r", toolbox)  # an older session letting go leaves the newer one's ToolBox
    newer.release.set()
    assert await runs.call("r", "check_availability", {}) == ToolResult("mcp-1", "ok")
    runs.close("r", newer)
    assert await runs.call("r", "check_availability", {}) is None
