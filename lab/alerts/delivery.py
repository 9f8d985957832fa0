"""The outbox worker's steps: claim one due message, send it, record the attempt, repeat.

A claim is one conditional UPDATE (pending, due, and unclaimed or lapsed), so two workers on
SQLite or PostgreSQL never hold one message at once. A message is marked delivered only after a
2xx; a worker killed in between leaves a claim that lapses, and the message is sent again.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from pydantic import ValidationError

from lab.alerts.models import DeliveryAttempt, MessageState, OutboxMessage
from lab.alerts.payload import AlertPayload
from lab.alerts.retry import RetryPolicy
from lab.alerts.sender import Outcome, post_alert
from lab.alerts.targets import origin_of


@dataclass(frozen=True)
class WorkerConfig:
    timeout_s: float
    lease_s: float
    policy: RetryPolicy

    @classmethod
    def from_settings(cls) -> WorkerConfig:
        return cls(
            timeout_s=settings.LAB_ALERT_TIMEOUT_S,
            lease_s=settings.LAB_ALERT_LEASE_S,
            policy=RetryPolicy(
                base_s=settings.LAB_ALERT_BACKOFF_BASE_S,
                cap_s=settings.LAB_ALERT_BACKOFF_CAP_S,
                max_attempts=settings.LAB_ALERT_MAX_ATTEMPTS,
            ),
        )


@dataclass(frozen=True)
class Sent:
    """What one attempt did, for the worker's log line."""

    event_id: str
    url: str
    outcome: Outcome
    state: str


def worker_name() -> str:
    """Who holds a claim: host and process, plus a random part so restarts never collide."""
    return f"{socket.gethostname()[:30]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _claimable(now: datetime) -> Q:
    # Only the message's own columns: a join here would make Django's UPDATE an `id IN
    # (subquery)`, which PostgreSQL does not re-check against a concurrent claim.
    return Q(state=MessageState.PENDING, next_attempt_at__lte=now) & (
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    )


def message_claim(*, worker: str, lease_s: float, now: datetime) -> OutboxMessage | None:
    """The oldest due message, now held by worker for lease_s; None when nothing is due."""
    while True:
        candidate = (
            # A disabled endpoint's messages wait; enabling it again sends them.
            OutboxMessage.objects.filter(_claimable(now), endpoint__active=True)
            .order_by("next_attempt_at", "id")
            .values_list("id", flat=True)
            .first()
        )
        if candidate is None:
            return None
        won = OutboxMessage.objects.filter(_claimable(now), id=candidate).update(
            claimed_by=worker, claimed_until=now + timedelta(seconds=lease_s)
        )
        if won:
            return OutboxMessage.objects.select_related("endpoint").get(id=candidate)
        # Another worker claimed it between the two statements: look again.


def message_send(message: OutboxMessage, *, timeout_s: float) -> Outcome:
    """POST the message's body to its endpoint, signed with the endpoint's secret."""
    try:
        body = AlertPayload.model_validate(message.payload).body()
    except ValidationError as error:
        # Nothing a retry can fix, but the attempt is recorded and the message dies in time.
        return Outcome(None, f"the stored payload is not an alert: {error}"[:500], 0.0)
    return post_alert(
        url=message.endpoint.url,
        secret=message.endpoint.secret,
        event_id=str(message.event_id),
        body=body,
        timeout_s=timeout_s,
        allowed=settings.LAB_OUTBOUND_ALLOWED_HOSTS,
        own=origin_of(settings.LAB_PUBLIC_URL),
    )


def attempt_record(
    *,
    message: OutboxMessage,
    outcome: Outcome,
    policy: RetryPolicy,
    now: datetime,
    jitter: float,
) -> str:
    """Store the attempt and the message's new state (delivered, retry later or dead)."""
    attempts = message.attempts + 1
    retry_at: datetime | None = None
    if outcome.delivered:
        state = MessageState.DELIVERED
    elif policy.gives_up(attempts):
        state = MessageState.DEAD
    else:
        state = MessageState.PENDING
        retry_at = now + timedelta(seconds=policy.delay_s(attempts, jitter))
    error = outcome.error or ("" if outcome.delivered else f"HTTP {outcome.status_code}")
    with transaction.atomic():
        OutboxMessage.objects.filter(id=message.id, state=MessageState.PENDING).update(
            state=state,
            attempts=attempts,
            next_attempt_at=retry_at or message.next_attempt_at,
            delivered_at=now if outcome.delivered else None,
            last_error=error,
            claimed_by="",
            claimed_until=None,
        )
        DeliveryAttempt.objects.create(
            message=message,
            at=now,
            status_code=outcome.status_code,
            error=error,
            duration_ms=outcome.duration_ms,
            next_attempt_at=retry_at,
        )
    return state


def deliver_due(
    *,
    config: WorkerConfig,
    worker: str,
    stop: threading.Event | None = None,
    now: datetime | None = None,
) -> list[Sent]:
    """Send every message due now, one claim at a time, until none is left or stop is set.

    now pins the clock for every claim (tests use it to make a retry due); by default each claim
    reads the clock afresh.
    """
    sent: list[Sent] = []
    while stop is None or not stop.is_set():
        claimed_at = now or timezone.now()
        message = message_claim(worker=worker, lease_s=config.lease_s, now=claimed_at)
        if message is None:
            break
        outcome = message_send(message, timeout_s=config.timeout_s)
        state = attempt_record(
            message=message,
            outcome=outcome,
            policy=config.policy,
            now=now or timezone.now(),
            jitter=random.random(),
        )
        sent.append(Sent(str(message.event_id), message.endpoint.url, outcome, state))
    return sent
