"""Which tenant's agent a run is for: chosen by a signed-in operator (or above) of that tenant
on the picker, or named to `runscenarios` from the shell. Every refusal is AgentRefused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lab.accounts.access import role_in
from lab.accounts.models import Agent, Membership
from lab.accounts.roles import Role, can_act


@dataclass(frozen=True)
class AgentRef:
    tenant: str
    slug: str

    @property
    def label(self) -> str:
        """How the picker and the API name it: tenant/agent."""
        return f"{self.tenant}/{self.slug}"


class AgentRefused(Exception):
    """Why a run cannot be for this agent; status is the HTTP answer a page gives."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def agent_named(tenant: str, slug: str) -> AgentRef:
    """The tenant's registered agent (the shell's choice); AgentRefused when there is none."""
    if not Agent.objects.filter(tenant__slug=tenant, slug=slug).exists():
        raise AgentRefused(
            404, f"tenant {tenant[:64]!r} has no agent {slug[:64]!r} (see manage.py seeddemo)"
        )
    return AgentRef(tenant, slug)


def agent_for_member(user: Any, label: str) -> AgentRef:
    """The agent `tenant/slug` names, if the signed-in user may run it for the tenant (operator
    or above): its runs write audit rows, cases and alerts into the tenant."""
    tenant, _, slug = label.strip().partition("/")
    if not getattr(user, "is_authenticated", False):
        raise AgentRefused(403, "Sign in as an operator of the agent's tenant to run for it.")
    role = role_in(user, tenant)
    known = bool(slug) and Agent.objects.filter(tenant__slug=tenant, slug=slug).exists()
    if role is None or not known:
        # Another tenant's agent and no agent at all look the same.
        raise AgentRefused(404, f"You have no agent {label.strip()[:130]!r} to run for.")
    if not can_act(role):
        raise AgentRefused(
            403, f"As a {role.value} of {tenant} you may read its runs, not add to them."
        )
    return AgentRef(tenant, slug)


def agents_runnable(user: Any) -> list[AgentRef]:
    """The agents of every tenant where the user is an operator or above, for the picker."""
    if not getattr(user, "is_authenticated", False):
        return []
    acting = [r.value for r in Role if can_act(r)]
    tenants = Membership.objects.filter(
        user_id=user.pk, user__is_active=True, role__in=acting
    ).values("tenant_id")
    found = Agent.objects.filter(tenant_id__in=tenants).select_related("tenant")
    return sorted((AgentRef(a.tenant.slug, a.slug) for a in found), key=lambda a: a.label)
