"""The run's sandboxed tools as an MCP server (the official SDK's low-level Server).

No Django, no I/O of its own: the HTTP edge (lab/web/mcp_http.py) checks the bearer token and
puts the run it opens into the request's ASGI scope as an `McpGrant`; the handlers offer that
run's tools and send each call to the run's ToolBox (lab/connectors/mcp_runs.py; through the gate
in guarded runs), or through a relay to the process that drives the run. What the ToolBox
answers is the tool result; anything but `ok` is an error result carrying the reason, so the
agent's model reads why.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from lab.connectors.interface import ToolResult
from lab.connectors.mcp_runs import LIVE, McpRuns
from lab.connectors.tool_specs import OwnTool, ToolSpec

logger = logging.getLogger(__name__)

GRANT_SCOPE_KEY = "lab.mcp_grant"
INSTRUCTIONS = (
    "The sandboxed tools of one Voice Reliability Lab run. Look up before you act; book or "
    "refund only what you read back to the caller and the caller then explicitly confirmed. "
    "In guarded runs the lab's policy gate decides every call and a refused call says why."
)


@dataclass(frozen=True)
class McpGrant:
    """What a request's token opens: one run and the tools its scenario offers."""

    run_id: str
    specs: tuple[ToolSpec | OwnTool, ...]
    # The lab's own scripted agent calls its tools in process; only an outside agent's run
    # has a ToolBox to reach over MCP.
    outside_agent: bool = True


def tool_listing(spec: ToolSpec | OwnTool) -> types.Tool:
    return types.Tool(name=spec.name, description=spec.description, input_schema=spec.json_schema())


def tool_result(result: ToolResult) -> types.CallToolResult:
    """A ToolResult on the MCP wire: `ok` as the content itself, anything else as an error; an
    agent's own tools get their own result shape either way."""
    if result.wire is not None:
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(result.wire, sort_keys=True))],
            structured_content=result.wire,
            is_error=result.kind != "ok",
        )
    if result.kind == "ok":
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(result.content, sort_keys=True))],
            structured_content=result.content,
        )
    return _error(result.reason or result.kind, {"outcome": result.kind, **result.content})


def _error(reason: str, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=reason)],
        structured_content=structured or {"outcome": "refused", "reason": reason},
        is_error=True,
    )


def _grant(ctx: ServerRequestContext[Any, Any]) -> McpGrant:
    scope = getattr(ctx.request, "scope", None)
    grant = scope.get(GRANT_SCOPE_KEY) if isinstance(scope, dict) else None
    if not isinstance(grant, McpGrant):
        # Only the HTTP edge serves this server, and it always grants; never guess a run.
        raise MCPError(code=types.INVALID_REQUEST, message="no run was granted to this request")
    return grant


class Relay(Protocol):
    """Carries a call to the process that holds the run's ToolBox (lab/connectors/mcp_relay.py)."""

    async def forward(
        self, run_id: str, name: str, arguments: dict[str, Any], *, timeout_s: float
    ) -> ToolResult | None: ...


def mcp_server(
    runs: McpRuns = LIVE, relay: Relay | None = None, relay_timeout_s: float = 30.0
) -> Server[Any]:
    """The one server every run's MCP URL is served by; the grant says which run asks."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_listing(spec) for spec in _grant(ctx).specs])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        grant = _grant(ctx)
        arguments = params.arguments or {}
        try:
            result = await runs.call(grant.run_id, params.name, arguments)
        except Exception:
            # An error result, never a 500: the agent is told the call did not complete, and
            # the run's log holds whatever was recorded before it failed.
            logger.exception("MCP call %s on run %s failed", params.name, grant.run_id)
            return _error(
                "the lab could not complete this call; the run's log says what it recorded"
            )
        if result is not None:
            return tool_result(result)
        if not grant.outside_agent:
            return _error(
                "this run's agent is the lab's own scripted agent, which calls its tools in "
                "process; start the run with an outside agent to call them over MCP"
            )
        if relay is not None:
            relayed = await relay.forward(
                grant.run_id, params.name, arguments, timeout_s=relay_timeout_s
            )
            if relayed is not None:
                return tool_result(relayed)
        offered = [spec.name for spec in grant.specs]
        if params.name not in offered:
            return _error(
                f"this run offers no tool named {params.name!r}; it offers {', '.join(offered)}"
            )
        return _error(
            "this run is not live in the lab: its session has not started yet, or the process "
            "driving it did not answer in time"
        )

    return Server(
        "voice-reliability-lab",
        version="1",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
