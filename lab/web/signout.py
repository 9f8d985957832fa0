"""Signing out ends the run sockets the session's owner token opened: the token goes with the
session, and so does the right to watch or drive its runs (lab.accounts.revocation)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_out
from django.dispatch import receiver

from lab.accounts.revocation import REVOKED, secret_group, tell
from lab.runs.ownership import OWNER_SESSION_KEY


def owner_group(owner_token: str) -> str:
    """The group of every run socket opened with this owner token."""
    return secret_group("owner", owner_token)


@receiver(user_logged_out)
def _owner_token_gone(sender: Any, request: Any = None, **kwargs: Any) -> None:
    session = getattr(request, "session", None)
    token = session.get(OWNER_SESSION_KEY) if session is not None else None
    if token:
        tell(owner_group(token), REVOKED)
