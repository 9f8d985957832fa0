"""Open sockets hear when the right they were opened with is gone: a membership deleted or
changed, a user deactivated, a session signed out. Each socket joins the groups of what it
rests on and checks again, or closes, when told (lab/operator/consumers.py,
lab/web/consumers.py); the message goes through the channel layer, so it reaches sockets on
every process, after the change commits."""

from __future__ import annotations

import hashlib
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_out
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from lab.accounts.models import Membership

# Re-check the memberships this socket rests on; it closes if they are gone.
CHANGED = "access.changed"
# The session it was opened with is signed out: close.
REVOKED = "access.revoked"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def user_group(user_id: int) -> str:
    return f"access.user.{user_id}"


def session_group(session_key: str) -> str:
    # Hashed: the session key is a credential and must not travel as a group name.
    return f"access.session.{_digest(session_key)}"


def secret_group(kind: str, secret: str) -> str:
    """The group of sockets presenting one secret (a run's owner token, say), hashed."""
    return f"access.{kind}.{_digest(secret)}"


def tell(group: str, kind: str) -> None:
    """Tell every socket in the group, once the current transaction (if any) commits."""

    def send() -> None:
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(group, {"type": kind})

    transaction.on_commit(send)


@receiver(post_save, sender=Membership)
@receiver(post_delete, sender=Membership)
def _membership_changed(sender: Any, instance: Membership, **kwargs: Any) -> None:
    tell(user_group(instance.user_id), CHANGED)


@receiver(post_save, sender=User)
def _user_changed(sender: Any, instance: User, created: bool = False, **kwargs: Any) -> None:
    # Deactivated, or a new password (which signs every other session out): check again.
    if not created:
        tell(user_group(instance.pk), CHANGED)


@receiver(user_logged_out)
def _signed_out(sender: Any, request: Any = None, **kwargs: Any) -> None:
    session = getattr(request, "session", None)
    if session is not None and session.session_key:
        tell(session_group(session.session_key), REVOKED)
