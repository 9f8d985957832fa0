"""The driver lease: at most one live session, on any process, may append to a run.

Taken with one conditional UPDATE (free, lapsed, or already mine), renewed while a socket
drives the run, and fenced on every append (lab.events.store.event_append).
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone

from lab.events.models import Run


def lease_holder_new() -> str:
    """A fresh holder token: one per live session, never shared between processes."""
    return secrets.token_hex(16)


def lease_take(*, run_id: str, holder: str, ttl_s: float, now: datetime | None = None) -> bool:
    """Take or keep the lease of an active run; False while someone else holds it."""
    now = now or timezone.now()
    taken = (
        Run.objects.filter(pk=run_id, status=Run.Status.ACTIVE)
        .filter(Q(driver_token="") | Q(driver_expires_at__lt=now) | Q(driver_token=holder))
        .update(driver_token=holder, driver_expires_at=now + timedelta(seconds=ttl_s))
    )
    return taken == 1


def lease_renew(*, run_id: str, holder: str, ttl_s: float, now: datetime | None = None) -> bool:
    """Extend a lease this holder still has; False once another session took it over."""
    now = now or timezone.now()
    renewed = Run.objects.filter(pk=run_id, status=Run.Status.ACTIVE, driver_token=holder).update(
        driver_expires_at=now + timedelta(seconds=ttl_s)
    )
    return renewed == 1


def lease_release(*, run_id: str, holder: str) -> None:
    """Give the lease up at once (a no-op when another session already holds it)."""
    Run.objects.filter(pk=run_id, driver_token=holder).update(
        driver_token="", driver_expires_at=None
    )
