"""Who may call a run's sandboxed tools over MCP: the holder of the run's bearer token, until the
run ends.

The run stores only the token's SHA-256 (as it does its owner's and share link's tokens); the
raw token is shown once, when it is issued. Every request is checked anew, so a token stops
opening anything the moment its run is marked ended.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Literal

from lab.agent_tools.schema import ToolsFile
from lab.connectors.tool_specs import OwnTool, ToolSpec, offered_specs, own_tools
from lab.events.models import Run
from lab.scenarios.catalog import contract_get
from lab.tools.adapters import ADAPTERS


@dataclass(frozen=True)
class McpOpened:
    run: Run
    specs: tuple[ToolSpec | OwnTool, ...]
    outside_agent: bool


@dataclass(frozen=True)
class McpRefused:
    status: Literal[401, 403, 404]
    code: Literal["token_missing", "token_unknown", "no_such_run", "run_ended"]
    reason: str


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def mcp_token_issue(*, run: Run) -> str:
    """A new bearer token for the run's tools over MCP; it replaces (revokes) any earlier one."""
    token = secrets.token_urlsafe(32)
    Run.objects.filter(pk=run.pk).update(mcp_hash=token_digest(token))
    run.mcp_hash = token_digest(token)
    return token


def mcp_access(*, token: str | None, run_id: str) -> McpOpened | McpRefused:
    """The run the token opens if it is the one named, still running; else why not."""
    if not token:
        return McpRefused(
            401,
            "token_missing",
            "an Authorization: Bearer header with the run's MCP token is required",
        )
    run = Run.objects.filter(mcp_hash=token_digest(token)).first()
    if run is None:
        return McpRefused(401, "token_unknown", "this token opens no run's tools")
    if str(run.pk) != run_id:
        # The token's own run is not named: to this token, every other run does not exist.
        return McpRefused(404, "no_such_run", "there is no such run for this token")
    if run.status == Run.Status.ENDED:
        return McpRefused(403, "run_ended", "this run has ended; its tools are closed")
    return McpOpened(run, run_tool_specs(run), outside_agent=bool(run.agent_connector))


def run_tool_specs(run: Run) -> tuple[ToolSpec | OwnTool, ...]:
    """The tools the run offers an outside agent: its own (its tools file) as it wrote them,
    else the lab's for the run's scenario."""
    if run.agent_tools:
        return own_tools(ToolsFile.model_validate(run.agent_tools))
    actions = frozenset(ADAPTERS[name].action for name in contract_get(run.scenario_id).tools)
    return tuple(offered_specs(actions))
