"""Which agent `runscenarios` plays and where its trials are shown, checked before any run."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, OutputWrapper
from django.urls import reverse

from lab.accounts.agents import AgentRef, AgentRefused, agent_named, agent_ready
from lab.agent_tools.inference import describe
from lab.connectors.registry import (
    API_KEY_ENV,
    AgentSpec,
    ConnectorUnavailable,
    check_connector,
    parse_spec,
)
from lab.events.models import TrialGroup
from lab.events.types import Channel, Mode
from lab.web.management.agent_tools import today_line, toolset_from


def attribution(tenant: str | None, slug: str | None) -> AgentRef | None:
    """The agent --tenant and --agent-slug name together, checked; None when neither is given."""
    if not tenant or not slug:
        return None
    try:
        return agent_named(tenant, slug)
    except AgentRefused as refused:
        raise CommandError(str(refused)) from None


def trials_path(group: TrialGroup, tenant_agent: AgentRef | None) -> str:
    """Where the trials are shown side by side: to the tenant's members when the runs were for
    one, else to the runs' owner, this process (the page's rules are the runs' own)."""
    if tenant_agent is not None:
        return reverse("operator_trials", args=[tenant_agent.tenant, group.id])
    path = reverse("trials_page", args=[group.id])
    return (
        f"{path} (open to the runs' owner, this process; "
        "with --tenant T --agent-slug S the page is T's members' to open)"
    )


def with_tools(spec: AgentSpec, path: Path | None, err: OutputWrapper) -> AgentSpec:
    """The spec with its own tools file, read and checked now; what was inferred is printed."""
    if path is None:
        return spec
    if spec.scripted:
        raise CommandError("--tools describes an outside agent's own tools; give --agent too")
    toolset = toolset_from(path)
    err.write(f"tools file {path} (sha256 {toolset.digest[:12]}…), read as:")
    if today := today_line(toolset):
        err.write(f"  {today}")
    for line in describe(toolset.meanings):
        err.write(f"  {line}")
    return replace(spec, toolset=toolset)


def versus_agent(options: dict[str, Any]) -> AgentSpec:
    """The --versus agent, checked before any run is created."""
    try:
        spec = parse_spec(
            options["versus"],
            model=options["versus_model"] or options["model"],
            api_key=os.environ.get(API_KEY_ENV) or None,
        )
        check_connector(spec)
    except ConnectorUnavailable as error:
        raise CommandError(f"--versus: {error}") from None
    return spec


def agent_of(options: dict[str, Any], tenant_agent: AgentRef | None) -> AgentSpec:
    """The --agent spec or the registered agent's, checked before any run is created."""
    if tenant_agent is not None:
        try:
            return agent_ready(tenant_agent) or parse_spec("scripted")
        except AgentRefused as refused:
            raise CommandError(str(refused)) from None
    try:
        spec = parse_spec(
            options["agent"], model=options["model"], api_key=os.environ.get(API_KEY_ENV) or None
        )
        check_connector(spec)
    except ConnectorUnavailable as error:
        raise CommandError(f"--agent: {error}") from None
    return spec


@dataclass(frozen=True)
class RunStart:
    """What every run of one invocation shares."""

    mode: Mode
    channel: Channel
    ungrounded: bool
    agent: AgentSpec
    tenant_agent: AgentRef | None
    sandbox_port: int | None = None
