"""Failed sign-ins and failed API tokens, counted in Django's cache per account and per client
address; past a limit, every attempt (a correct one too) is refused until the cool-off passes.

Each failure restarts the cool-off; an attempt refused while locked is not checked at all, so
guessing goes no faster than the limit per cool-off. The cache is
the process's own by default and Redis when REDIS_URL is set (lab/settings.py), so the count
holds across the processes of a scaled-out lab.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

log = logging.getLogger("lab.accounts.throttle")


@dataclass(frozen=True)
class Counter:
    """One thing failures are counted against: an account, or a client address."""

    kind: str  # signin.account, signin.address, api.address
    value: str
    limit: int

    @property
    def key(self) -> str:
        # Hashed: a username or address never becomes part of a cache key as typed.
        return f"lab.throttle.{self.kind}.{hashlib.sha256(self.value.encode()).hexdigest()[:40]}"


def client_address(request: HttpRequest) -> str:
    """The peer daphne saw; a proxy in front must be the only way in (deploy/nginx)."""
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def signin_counters(request: HttpRequest, username: str) -> list[Counter]:
    return [
        Counter("signin.account", username.strip().lower(), settings.LAB_SIGNIN_ACCOUNT_LIMIT),
        Counter("signin.address", client_address(request), settings.LAB_SIGNIN_ADDRESS_LIMIT),
    ]


def api_counters(request: HttpRequest) -> list[Counter]:
    return [Counter("api.address", client_address(request), settings.LAB_API_ADDRESS_LIMIT)]


def retry_after(counters: list[Counter], *, now: float | None = None) -> int | None:
    """Seconds until the attempt may be made, or None when no counter is past its limit."""
    now = time.time() if now is None else now
    cool_off = settings.LAB_THROTTLE_COOLOFF_S
    waits = []
    for counter in counters:
        state = cache.get(counter.key)
        if state is None:
            continue
        failures, last = state
        remaining = last + cool_off - now
        if failures >= counter.limit and remaining > 0:
            waits.append(max(1, math.ceil(remaining)))
    return max(waits) if waits else None


def failed(counters: list[Counter], *, now: float | None = None) -> None:
    """Count one failure against each counter, restarting its cool-off."""
    now = time.time() if now is None else now
    cool_off = settings.LAB_THROTTLE_COOLOFF_S
    for counter in counters:
        state = cache.get(counter.key)
        failures = state[0] if state is not None and now - state[1] < cool_off else 0
        # Kept a little past the cool-off, so the lock ends by the clock, not by eviction.
        cache.set(counter.key, (failures + 1, now), timeout=max(1, math.ceil(cool_off)) + 60)
        if failures + 1 == counter.limit:
            log.warning("throttle: %s locked after %d failures", counter.kind, counter.limit)


def succeeded(counter: Counter) -> None:
    """A correct sign-in that was let through clears its account's count."""
    cache.delete(counter.key)
