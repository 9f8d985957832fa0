"""The agent a run names: its spec (key from the environment), its tools file and identity."""

from __future__ import annotations

import os

from lab.accounts.agent_sandbox import owner_of
from lab.accounts.agent_targets import secret_env_owned
from lab.accounts.agents import checked_resolver
from lab.agent_tools.schema import ToolsFile
from lab.agent_tools.toolset import Toolset
from lab.connectors.interface import AgentIdentity
from lab.connectors.registry import API_KEY_ENV, AgentSpec
from lab.connectors.tool_specs import tools_digest
from lab.events.models import Run
from lab.events.types import Channel
from lab.runs.external_tools import GatedToolBox
from lab.scripted.setup import calendar_week


def run_toolset(run: Run) -> Toolset | None:
    """The agent's own tools the run was made with (validated then), or None: the lab's."""
    if not run.agent_tools:
        return None
    return Toolset(ToolsFile.model_validate(run.agent_tools), calendar_week())


def agent_spec(run: Run, tools: tuple[str, ...] = ()) -> AgentSpec | None:
    """The agent under test a run names, with its key from the environment; None: scripted."""
    if not run.agent_connector:
        return None
    return AgentSpec(
        connector=run.agent_connector,
        endpoint=run.agent_endpoint,
        model=run.agent_model,
        api_key=_api_key(run),
        tools=tools,
        toolset=run_toolset(run),
        # A tenant chose the URL: every connection goes to an address checked as it is made.
        resolve=checked_resolver(run.agent_connector, run.agent_endpoint) if run.tenant else None,
        voice=run.channel == Channel.VOICE,
        owner=run_owner(run),
    )


def run_owner(run: Run) -> str:
    """The registered agent the run calls, "tenant/slug"; "" for none."""
    return owner_of(run.tenant, run.agent) if run.tenant and run.agent else ""


def _api_key(run: Run) -> str | None:
    """A tenant's agent gets the key its registration names, or none: never the lab's own
    LAB_AGENT_API_KEY, which only the shell's runs for no tenant use."""
    if run.tenant:
        if not secret_env_owned(run.agent_key_env, run.tenant):
            return None  # none named, or not the tenant's own (the run is refused in words)
        return os.environ.get(run.agent_key_env) or None
    return os.environ.get(API_KEY_ENV) or None


def agent_identity(identity: AgentIdentity, toolbox: GatedToolBox | None) -> AgentIdentity:
    """The identity with the digest of the tools the lab offered, and the tools file's mapping."""
    # A pipecat bot runs its own tools: the lab offered it none.
    if identity.tools_digest is None and toolbox is not None and identity.connector != "pipecat":
        identity = identity.model_copy(update={"tools_digest": tools_digest(toolbox.offered)})
    if toolbox is not None and toolbox.toolset is not None:
        toolset = toolbox.toolset
        identity = identity.model_copy(
            update={
                "tools_file_digest": toolset.digest,
                "tools_mapping": toolset.mapping(),
                "tools_today": toolset.file.today,
            }
        )
    return identity
