"""Tenant roles and what each may do (pure: no Django)."""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    OPERATOR = "operator"
    VIEWER = "viewer"


_VIEWERS = frozenset(Role)
_ACTORS = frozenset({Role.OWNER, Role.ADMIN, Role.OPERATOR})
_MANAGERS = frozenset({Role.OWNER, Role.ADMIN})


def can_view(role: Role) -> bool:
    """Every member sees the queue page and the per-agent audit APIs."""
    return role in _VIEWERS


def can_act(role: Role) -> bool:
    """Acknowledge, override and escalate flags."""
    return role in _ACTORS


def can_view_rollup(role: Role) -> bool:
    """The tenant rollup (API and page)."""
    return role in _MANAGERS


def can_manage(role: Role) -> bool:
    """Webhook endpoints and tenant settings."""
    return role in _MANAGERS


def role_parse(raw: str) -> Role:
    """The role named by raw, or a ValueError that lists the valid ones."""
    try:
        return Role(raw.strip().lower())
    except ValueError:
        valid = ", ".join(role.value for role in Role)
        raise ValueError(f"unknown role {raw!r}; choose one of {valid}") from None
