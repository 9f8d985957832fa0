"""The header's operator console: each of the signed-in user's tenants with the pages their
role opens (a template context processor; anonymous visitors get none)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from lab.accounts.models import Membership
from lab.accounts.roles import Role, can_manage, can_view_rollup

# (url name, label, who sees it); a page whose route this lab lacks is left out.
_PAGES = (
    ("queue_page", "Queue", lambda role: True),
    ("rollup_page", "Rollup", can_view_rollup),
    ("alerts_page", "Alerts", can_manage),
    ("operator_trials_list", "Trials", lambda role: True),
    ("operator_compare", "Compare", lambda role: True),
    ("agents_page", "Agents", lambda role: True),
    ("tenant_settings", "Settings", can_manage),
)


@dataclass(frozen=True)
class ConsoleLink:
    label: str
    url: str


@dataclass(frozen=True)
class ConsoleTenant:
    slug: str
    name: str
    role: str
    links: tuple[ConsoleLink, ...]


def _links(slug: str, role: Role) -> tuple[ConsoleLink, ...]:
    links = []
    for name, label, allowed in _PAGES:
        if not allowed(role):
            continue
        try:
            links.append(ConsoleLink(label, reverse(name, args=[slug])))
        except NoReverseMatch:
            continue
    return tuple(links)


def console_tenants(user: Any) -> list[ConsoleTenant]:
    """The tenants the user belongs to, each with the console pages their role may open."""
    if not getattr(user, "is_authenticated", False) or not getattr(user, "is_active", False):
        return []
    memberships = (
        Membership.objects.select_related("tenant").filter(user_id=user.pk).order_by("tenant__slug")
    )
    return [
        ConsoleTenant(
            slug=m.tenant.slug,
            name=m.tenant.name or m.tenant.slug,
            role=m.role,
            links=_links(m.tenant.slug, Role(m.role)),
        )
        for m in memberships
    ]


def console_preload(request: HttpRequest) -> None:
    """Read the console on this thread, for a page an async view renders off the database's."""
    request.console_tenants = console_tenants(getattr(request, "user", None))  # type: ignore[attr-defined]


def console(request: HttpRequest) -> dict[str, list[ConsoleTenant]]:
    preloaded = getattr(request, "console_tenants", None)
    if preloaded is not None:
        return {"console_tenants": preloaded}
    return {"console_tenants": console_tenants(getattr(request, "user", None))}
