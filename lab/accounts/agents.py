"""Which tenant's agent a run is for: chosen by a signed-in operator (or above) of that tenant
on the picker, or named to `runscenarios` from the shell. Every refusal is AgentRefused."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from lab.accounts.access import role_in
from lab.accounts.agent_targets import (
    CONNECTORS,
    SCRIPTED,
    endpoint_check,
    secret_env_check,
    tenant_secret_prefix,
)
from lab.accounts.models import Agent, Membership, Tenant
from lab.accounts.roles import Role, can_act
from lab.agent_tools.schema import ToolsFile
from lab.agent_tools.toolset import Toolset
from lab.alerts.targets import Target, TargetRefused, origin_of
from lab.connectors.pinning import AddressRefused, Resolve
from lab.connectors.registry import AgentSpec, ConnectorUnavailable, check_connector
from lab.scripted.setup import calendar_week


@dataclass(frozen=True)
class AgentRef:
    """A registered agent as runs use it: whose it is and how it is reached (never its key)."""

    tenant: str
    slug: str
    connector: str = SCRIPTED
    endpoint: str = ""
    model: str = ""
    secret_env: str = ""
    tools: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        """How the picker and the API name it: tenant/agent."""
        return f"{self.tenant}/{self.slug}"

    @property
    def connector_label(self) -> str:
        """What the picker says beside it: the connector, and the model where one is named."""
        kind = CONNECTORS[self.connector].label if self.connector in CONNECTORS else self.connector
        return f"{kind} (model {self.model})" if self.model else kind

    def spec(self) -> AgentSpec | None:
        """The agent under test its runs record; None for the lab's scripted agent."""
        if self.connector == SCRIPTED:
            return None
        toolset = None
        if self.tools is not None:
            toolset = Toolset(ToolsFile.model_validate(self.tools), calendar_week())
        return AgentSpec(
            connector=self.connector, endpoint=self.endpoint, model=self.model, toolset=toolset
        )

    @classmethod
    def of(cls, agent: Agent) -> AgentRef:
        return cls(
            tenant=agent.tenant.slug,
            slug=agent.slug,
            connector=agent.connector,
            endpoint=agent.endpoint,
            model=agent.model,
            secret_env=agent.secret_env,
            tools=agent.tools,
        )


class AgentRefused(Exception):
    """Why a run cannot be for this agent; status is the HTTP answer a page gives."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def agent_named(tenant: str, slug: str) -> AgentRef:
    """The tenant's registered agent (the shell's choice); AgentRefused when there is none."""
    found = Agent.objects.select_related("tenant").filter(tenant__slug=tenant, slug=slug).first()
    if found is None:
        raise AgentRefused(
            404, f"tenant {tenant[:64]!r} has no agent {slug[:64]!r} (see manage.py seeddemo)"
        )
    return AgentRef.of(found)


def agent_for_member(user: Any, label: str) -> AgentRef:
    """The agent `tenant/slug` names, if the signed-in user may run it for the tenant (operator
    or above): its runs write audit rows, cases and alerts into the tenant."""
    tenant, _, slug = label.strip().partition("/")
    if not getattr(user, "is_authenticated", False):
        raise AgentRefused(403, "Sign in as an operator of the agent's tenant to run for it.")
    role = role_in(user, tenant)
    found = (
        Agent.objects.select_related("tenant").filter(tenant__slug=tenant, slug=slug).first()
        if slug
        else None
    )
    if role is None or found is None:
        # Another tenant's agent and no agent at all look the same.
        raise AgentRefused(404, f"You have no agent {label.strip()[:130]!r} to run for.")
    if not can_act(role):
        raise AgentRefused(
            403, f"As a {role.value} of {tenant} you may read its runs, not add to them."
        )
    return AgentRef.of(found)


def agents_runnable(user: Any) -> list[AgentRef]:
    """The agents of every tenant where the user is an operator or above, for the picker."""
    if not getattr(user, "is_authenticated", False):
        return []
    acting = [r.value for r in Role if can_act(r)]
    tenants = Membership.objects.filter(
        user_id=user.pk, user__is_active=True, role__in=acting
    ).values("tenant_id")
    found = Agent.objects.filter(tenant_id__in=tenants).select_related("tenant")
    return sorted((AgentRef.of(a) for a in found), key=lambda a: a.label)


def agent_target_check(connector: str, url: str, *, resolved: bool) -> Target | None:
    """The agent's URL under the alert webhooks' rules and exceptions; raises TargetRefused.

    Unresolved (a form, a run being created), a name that does not resolve yet passes; resolved
    (a run connecting), every address the name has now is checked."""
    return endpoint_check(
        connector,
        url,
        allowed=settings.LAB_OUTBOUND_ALLOWED_HOSTS,
        own=origin_of(settings.LAB_PUBLIC_URL),
        unresolved_ok=not resolved,
    )


def checked_resolver(connector: str, endpoint: str) -> Resolve:
    """How a tenant's agent's connector resolves its host: the registered URL checked anew at
    each connection, answering only the addresses that passed (lab.connectors.pinning)."""

    def resolve(host: str, port: int) -> list[str]:
        try:
            target = agent_target_check(connector, endpoint, resolved=True)
        except TargetRefused as refused:
            raise AddressRefused(f"its URL is refused: {refused}") from None
        if target is None or (target.host, target.port) != (host.lower().rstrip("."), port):
            raise AddressRefused(f"{host}:{port} is not the agent's registered host")
        return list(target.addresses)

    return resolve


def secret_env_refusal(secret_env: str, tenant: str) -> str | None:
    """Why the variable may not hold this tenant's agent's key, in words; None when it may.

    It must carry the tenant's prefix, and no other tenant may share that prefix (slugs that
    differ only in case or in - and _ would), so a name is one tenant's alone."""
    try:
        secret_env_check(secret_env, tenant)
    except ValueError as error:
        return f"its key's variable {secret_env[:100]} is not {tenant}'s: {error}"
    if not secret_env:
        return None
    prefix = tenant_secret_prefix(tenant)
    sharing = sorted(
        slug
        for slug in Tenant.objects.exclude(slug=tenant).values_list("slug", flat=True)
        if tenant_secret_prefix(slug) == prefix
    )
    if sharing:
        return (
            f"its key's variable prefix {prefix} is also tenant {sharing[0]}'s "
            "(the lab's operator renames one of the tenants)"
        )
    return None


def connect_refusal(
    *, connector: str, endpoint: str, secret_env: str, tenant: str, resolved: bool = True
) -> str | None:
    """Why a registered agent cannot be connected now, in words; None when it can."""
    try:
        agent_target_check(connector, endpoint, resolved=resolved)
    except TargetRefused as refused:
        return f"its URL is refused: {refused}"
    if refusal := secret_env_refusal(secret_env, tenant):
        return refusal
    if secret_env and not os.environ.get(secret_env):
        return (
            f"its key's variable {secret_env} is not set in the lab's environment "
            "(the lab's operator sets it)"
        )
    return None


def agent_ready(ref: AgentRef) -> AgentSpec | None:
    """The registered agent's spec for a new run, once it could connect; AgentRefused (409)
    saying why not. None: the scripted agent."""
    spec = ref.spec()
    if spec is None:
        return None
    refusal = connect_refusal(
        connector=ref.connector,
        endpoint=ref.endpoint,
        secret_env=ref.secret_env,
        tenant=ref.tenant,
        resolved=False,
    )
    if refusal is None:
        try:
            check_connector(spec)
        except ConnectorUnavailable as error:
            refusal = str(error)
    if refusal is not None:
        raise AgentRefused(409, f"{ref.label} cannot be run: {refusal}.")
    return spec
