"""Who belongs to which tenant in which role, and API tokens (stored only as SHA-256 digests)."""

from __future__ import annotations

import hashlib
import secrets
from importlib import import_module
from types import SimpleNamespace
from typing import Any, cast

from django.conf import settings
from django.contrib.auth import get_user
from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils import timezone

from lab.accounts.models import ApiToken, Membership
from lab.accounts.roles import Role

TOKEN_PREFIX = "vrl_"
PREFIX_CHARS = 12


def _signed_in(user: Any) -> bool:
    return user is not None and bool(getattr(user, "is_authenticated", False))


def membership(user: Any, tenant_slug: str) -> Membership | None:
    """The user's membership of the tenant; None for anonymous, non-members, unknown tenants."""
    if not _signed_in(user) or not getattr(user, "is_active", False):
        return None
    return (
        Membership.objects.select_related("tenant")
        .filter(user_id=user.pk, tenant__slug=tenant_slug)
        .first()
    )


def role_in(user: Any, tenant_slug: str) -> Role | None:
    found = membership(user, tenant_slug)
    return Role(found.role) if found else None


def role_now(session_key: str | None, user_id: int, tenant_slug: str) -> Role | None:
    """The role a socket's user holds now, read afresh: None once the session is signed out
    (or signed in as someone else), the user deactivated, or the membership gone."""
    if not session_key:
        return None
    session = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)
    user = get_user(cast(HttpRequest, SimpleNamespace(session=session)))
    if not user.is_authenticated or user.pk != user_id:
        return None
    return role_in(user, tenant_slug)


def token_digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def issue_token(user: User, name: str = "") -> str:
    """A new API token for the user: the raw value is returned once, only its digest is kept."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ApiToken.objects.create(
        user=user, digest=token_digest(raw), prefix=raw[:PREFIX_CHARS], name=name.strip()[:100]
    )
    return raw


def user_for_token(raw: str) -> User | None:
    """The active user a live token belongs to (marking it used), or None."""
    if not raw or len(raw) > 200:
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(raw), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if token is None:
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
    return token.user


def revoke_token(prefix: str, *, user: User | None = None) -> ApiToken:
    """Revoke the one live token with this prefix (the user's own, when given).

    LookupError when none or more than one matches, so a short prefix never revokes the wrong one.
    """
    live = ApiToken.objects.filter(prefix__startswith=prefix.strip(), revoked_at__isnull=True)
    if user is not None:
        live = live.filter(user=user)
    found = list(live[:2]) if prefix.strip() else []
    if len(found) != 1:
        why = "no live token" if not found else "more than one live token"
        raise LookupError(f"{why} starts with {prefix.strip()!r}")
    token = found[0]
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    return token
