"""The live runs of this process whose sandboxed tools an outside agent reaches over MCP.

Pure: no Django, no I/O. A run's session opens its ToolBox here while it drives the run and
closes it when it lets the run go. The MCP endpoint finds the run's tools here; a run driven by
another process (scaled out) is not here, and its calls are refused with words rather than
routed, since a ToolBox is a live object of the session that holds the run's lease.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any

from lab.connectors.interface import ToolBox, ToolCall, ToolResult


@dataclass
class _Open:
    toolbox: ToolBox
    # The call ids the MCP endpoint gives its calls, one sequence per run: "mcp-1", "mcp-2"…
    numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # One call at a time: the gate decides each call on the state the one before it left.
    turn: asyncio.Lock = field(default_factory=asyncio.Lock)


class McpRuns:
    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}

    def open(self, run_id: str, toolbox: ToolBox) -> None:
        """The run's calls over MCP go to this ToolBox from now on (a rebuilt session replaces
        the one before it)."""
        self._open[run_id] = _Open(toolbox)

    def close(self, run_id: str, toolbox: ToolBox) -> None:
        """The session let the run go; a newer session's ToolBox for it stays."""
        held = self._open.get(run_id)
        if held is not None and held.toolbox is toolbox:
            del self._open[run_id]

    async def call(self, run_id: str, name: str, arguments: dict[str, Any]) -> ToolResult | None:
        """One call on the run's ToolBox, once every earlier one on it has finished (parallel
        tool calls are carried out in the order they came); None if this process holds no
        ToolBox for the run."""
        held = self._open.get(run_id)
        if held is None:
            return None
        async with held.turn:
            call = ToolCall(call_id=f"mcp-{next(held.numbers)}", name=name, arguments=arguments)
            return await held.toolbox.call(call)


LIVE = McpRuns()
