"""Who may see and drive a run: the browser session that started it, or a share link.

A run stores only SHA-256 digests: of its owner's token (kept in the owner's Django session,
so it survives a session key rotation such as a later login) and of its share link's token.
Unknown and forbidden runs look the same to a caller: both are None here, 404 outside.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from django.db.models import QuerySet

from lab.events.models import Run

OWNER_SESSION_KEY = "lab.owner"


class Access(StrEnum):
    OWNER = "owner"
    SHARED = "shared"


@dataclass(frozen=True)
class Viewer:
    """What a request or socket presents: the owner token of its session, a share token."""

    owner_token: str | None = None
    share_token: str | None = None


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
    if viewer.owner_token and run_id is not None:
        owned = Run.objects.filter(pk=run_id, owner_hash=token_digest(viewer.owner_token)).first()
        return RunAccess(owned, Access.OWNER) if owned else None
    return None


def runs_owned(owner_token: str | None) -> QuerySet[Run]:
    """The owner's runs, newest first; nothing for a viewer without an owner token."""
    if not owner_token:
        return Run.objects.none()
    return Run.objects.filter(owner_hash=token_digest(owner_token)).order_by("-created_at")


def share_link_create(*, run: Run) -> str:
    """A new read-only capability token for the run; it replaces (revokes) any earlier one."""
    token = secrets.token_urlsafe(32)
    Run.objects.filter(pk=run.pk).update(share_hash=token_digest(token))
    return token
