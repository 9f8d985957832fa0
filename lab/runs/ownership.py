"""Who may see and drive a run: the browser session or signed-in user that started it, or a
share link.

A run stores only SHA-256 digests: of its owner's token (kept in the owner's Django session,
so it survives a session key rotation such as a later login) and of its share link's token;
a run a signed-in user starts also names the user, so any session they sign in to owns it.
Unknown and forbidden runs look the same to a caller: both are None here, 404 outside.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from django.db.models import Q, QuerySet

from lab.accounts.revocation import REVOKED, tell
from lab.events.models import Run

OWNER_SESSION_KEY = "lab.owner"


class Access(StrEnum):
    OWNER = "owner"
    SHARED = "shared"


@dataclass(frozen=True)
class Viewer:
    """What a request or socket presents: the owner token and signed-in user of its session,
    a share token."""

    owner_token: str | None = None
    share_token: str | None = None
    user_id: int | None = None


@dataclass(frozen=True)
class RunAccess:
    run: Run
    access: Access

    @property
    def may_drive(self) -> bool:
        return self.access is Access.OWNER


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def owner_token_new() -> str:
    return secrets.token_urlsafe(32)


@cache
def headless_owner_token() -> str:
    """The owner of runs this process starts for itself (runscenarios, tests): never leaves it."""
    return owner_token_new()


def run_access(*, viewer: Viewer, run_id: str | None = None) -> RunAccess | None:
    """The run the viewer may see and how, or None. A share token names its run by itself."""
    if viewer.share_token is not None:
        shared = Run.objects.filter(share_hash=token_digest(viewer.share_token))
        if run_id is not None:
            shared = shared.filter(pk=run_id)
        run = shared.first()
        return RunAccess(run, Access.SHARED) if run else None
    if run_id is not None:
        owned = runs_owned(viewer.owner_token, viewer.user_id).filter(pk=run_id).first()
        return RunAccess(owned, Access.OWNER) if owned else None
    return None


def runs_owned(owner_token: str | None, user_id: int | None = None) -> QuerySet[Run]:
    """The runs of the session's owner token or of its signed-in user, newest first."""
    mine = Q()
    if owner_token:
        mine |= Q(owner_hash=token_digest(owner_token))
    if user_id is not None:
        mine |= Q(owner_user_id=user_id)
    if not mine:
        return Run.objects.none()
    return Run.objects.filter(mine).order_by("-created_at")


def owner_user_set(*, run: Run, user_id: int) -> None:
    """The signed-in user who started the run owns it too, from any session."""
    Run.objects.filter(pk=run.pk).update(owner_user_id=user_id)
    run.owner_user_id = user_id


def share_group(share_hash: str) -> str:
    """The channel-layer group of the sockets watching through one share link."""
    return f"access.share.{share_hash[:40]}"


def share_link_create(*, run: Run) -> str:
    """A new read-only capability token for the run; it replaces (revokes) any earlier one,
    and the sockets watching through the old link close."""
    token = secrets.token_urlsafe(32)
    old = Run.objects.filter(pk=run.pk).values_list("share_hash", flat=True).first()
    Run.objects.filter(pk=run.pk).update(share_hash=token_digest(token))
    if old:
        tell(share_group(old), REVOKED)
    return token
