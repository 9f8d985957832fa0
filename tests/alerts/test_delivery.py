from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from lab.accounts.models import Tenant
from lab.alerts.delivery import WorkerConfig, deliver_due, message_claim
from lab.alerts.models import DeliveryAttempt, MessageState, OutboxMessage
from lab.alerts.outbox import endpoint_create, endpoint_set_active
from lab.alerts.payload import AlertPayload
from lab.alerts.retry import RetryPolicy
from lab.alerts.signing import EVENT_ID_HEADER, SIGNATURE_HEADER, verify_signature
from lab.audit.services import audit_record
from tests.alerts.support import critical_entries, receiver

pytestmark = pytest.mark.django_db
CONFIG = WorkerConfig(
    timeout_s=30.0, lease_s=60.0, policy=RetryPolicy(base_s=5.0, cap_s=60.0, max_attempts=3)
)


@pytest.fixture
def flag():
    """A stored critical flag of tenant demo; its alert waits in the outbox."""
    Tenant.objects.create(slug="demo")

    def store(url: str) -> OutboxMessage:
        endpoint = endpoint_create(tenant="demo", url=url)
        record = audit_record(entry=critical_entries()[0])
        return OutboxMessage.objects.get(record=record, endpoint=endpoint)

    return store


def test_the_receiver_gets_a_signed_body_of_the_seeds_shape_once(flag):
    with receiver() as hook:
        message = flag(hook.url)
        sent = deliver_due(config=CONFIG, worker="w1")
        [request] = hook.wait_for(1)
        assert deliver_due(config=CONFIG, worker="w1") == []
    assert [s.outcome.status_code for s in sent] == [200]
    secret = message.endpoint.secret
    verify_signature(secret, request.body, request.headers[SIGNATURE_HEADER], now=time.time())
    assert request.headers[EVENT_ID_HEADER] == str(message.event_id)
    assert request.headers["Content-Type"] == "application/json"
    AlertPayload.model_validate_json(request.body)
    assert json.loads(request.body) == message.payload
    message.refresh_from_db()
    assert (message.state, message.attempts, message.claimed_until) == (
        MessageState.DELIVERED,
        1,
        None,
    )
    assert message.delivered_at is not None


def test_a_500_is_retried_after_the_backoff_then_delivered_and_never_sent_again(flag):
    with receiver([500]) as hook:
        message = flag(hook.url)
        deliver_due(config=CONFIG, worker="w1")
        message.refresh_from_db()
        assert (message.state, message.attempts, message.last_error) == (
            MessageState.PENDING,
            1,
            "HTTPError: Internal Server Error",
        )
        # Not due before its backoff (at least half the 5 s base) has passed.
        assert message.next_attempt_at >= timezone.now() + timedelta(seconds=2)
        assert deliver_due(config=CONFIG, worker="w1") == []
        later = message.next_attempt_at + timedelta(milliseconds=1)
        deliver_due(config=CONFIG, worker="w1", now=later)
        assert deliver_due(config=CONFIG, worker="w1", now=later + timedelta(hours=1)) == []
        requests = hook.wait_for(2)
    assert len(requests) == 2
    assert {r.headers[EVENT_ID_HEADER] for r in requests} == {str(message.event_id)}
    attempts = list(DeliveryAttempt.objects.filter(message=message))
    assert [a.status_code for a in attempts] == [500, 200]
    assert attempts[0].next_attempt_at == message.next_attempt_at
    assert attempts[1].next_attempt_at is None
    message.refresh_from_db()
    assert (message.state, message.attempts) == (MessageState.DELIVERED, 2)


def test_a_message_that_keeps_failing_dies_after_the_last_attempt(flag):
    with receiver([503, 503, 503]) as hook:
        message = flag(hook.url)
        at = timezone.now()
        for _ in range(5):
            deliver_due(config=CONFIG, worker="w1", now=at)
            at += timedelta(minutes=5)
        assert len(hook.wait_for(3)) == 3
    message.refresh_from_db()
    assert (message.state, message.attempts) == (MessageState.DEAD, 3)
    assert DeliveryAttempt.objects.filter(message=message).count() == 3


def test_an_unreachable_endpoint_records_the_error_without_a_status(flag):
    with receiver() as hook:
        url = hook.url
    # The receiver is gone: its port refuses connections.
    message = flag(url)
    deliver_due(config=CONFIG, worker="w1")
    [attempt] = DeliveryAttempt.objects.filter(message=message)
    assert attempt.status_code is None
    assert "refused" in attempt.error.lower()


def test_two_workers_never_hold_one_message_and_a_lapsed_claim_is_taken_over(flag):
    message = flag("http://127.0.0.1:9/unused")
    now = timezone.now()
    held = message_claim(worker="w1", lease_s=60, now=now)
    assert held is not None and held.id == message.id
    assert message_claim(worker="w2", lease_s=60, now=now) is None
    assert message_claim(worker="w2", lease_s=60, now=now + timedelta(seconds=59)) is None
    taken = message_claim(worker="w2", lease_s=60, now=now + timedelta(seconds=61))
    assert taken is not None and taken.claimed_by == "w2"


def test_a_disabled_endpoints_alerts_wait_until_it_is_enabled_again(flag):
    with receiver() as hook:
        message = flag(hook.url)
        endpoint_set_active(endpoint=message.endpoint, active=False)
        assert deliver_due(config=CONFIG, worker="w1") == []
        endpoint_set_active(endpoint=message.endpoint, active=True)
        [sent] = deliver_due(config=CONFIG, worker="w1")
        assert len(hook.wait_for(1)) == 1
    assert sent.state == MessageState.DELIVERED
