from __future__ import annotations

import pytest
from django.db import transaction

from lab.accounts.models import Tenant
from lab.alerts.models import MessageState, OutboxMessage
from lab.alerts.outbox import endpoint_create, endpoint_set_active
from lab.alerts.payload import AlertPayload
from lab.audit.services import audit_record, audit_records_store
from lab.grading.grader import DETERMINISTIC_VERSION
from lab.grading.schema import Severity
from tests.alerts.support import critical_entries, graded_entries, with_severity

pytestmark = pytest.mark.django_db
# The webhook body of the per-turn grader seed, key for key.
SEED_KEYS = {
    "event",
    "severity",
    "tenant_id",
    "call_id",
    "turn_id",
    "verdict",
    "category",
    "claim",
    "agent_utterance",
    "caller_utterance",
    "constraint_ref",
    "rationale",
    "confidence",
    "grader_model",
    "constraint_list_version",
    "audit_row_ref",
    "links",
    "recommended_action",
}


@pytest.fixture
def demo() -> Tenant:
    return Tenant.objects.create(slug="demo")


def test_a_critical_flag_writes_one_message_per_active_endpoint_of_its_tenant(demo):
    first = endpoint_create(tenant="demo", url="http://127.0.0.1:9/a")
    second = endpoint_create(tenant="demo", url="http://127.0.0.1:9/b")
    endpoint_set_active(endpoint=endpoint_create(tenant="demo", url="http://x/c"), active=False)
    endpoint_create(tenant="other", url="http://127.0.0.1:9/other")
    record = audit_record(entry=critical_entries()[0])
    messages = OutboxMessage.objects.filter(record=record)
    assert {m.endpoint_id for m in messages} == {first.id, second.id}
    assert {m.state for m in messages} == {MessageState.PENDING}
    assert len({m.event_id for m in messages}) == 2


def test_the_payload_has_exactly_the_seeds_fields_with_absolute_links(demo, settings):
    settings.LAB_PUBLIC_URL = "https://lab.example"
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/a")
    record = audit_record(entry=critical_entries()[0])
    payload = OutboxMessage.objects.get(record=record).payload
    assert set(payload) == SEED_KEYS
    assert set(payload["links"]) == {"operator_console", "transcript", "audio"}
    alert = AlertPayload.model_validate(payload)
    assert (alert.event, alert.severity, alert.tenant_id) == (
        "hallucination_grader.flag",
        "critical",
        "demo",
    )
    assert (alert.call_id, alert.turn_id, alert.verdict) == ("price1", "price1-t2", "unsupported")
    assert alert.agent_utterance == record.utterance
    assert alert.caller_utterance == record.caller_turn
    assert list(alert.constraint_ref) == record.grade["constraint_ref"] != []
    assert alert.audit_row_ref == record.ref
    assert alert.grader_model == f"deterministic-grader-v{DETERMINISTIC_VERSION}"
    assert alert.recommended_action == "refund_or_callback_caller_within_2h"
    assert alert.links.operator_console == (
        f"https://lab.example/t/demo/queue/cases/{record.case.id}/"
    )
    # An imported call has its transcript page on the lab, and the lab keeps no call audio.
    assert alert.links.transcript == f"https://lab.example/t/demo/calls/price1/#{record.ref}"
    assert alert.links.audio is None


def test_a_payload_with_a_field_the_seed_lacks_is_refused():
    payload = {key: None for key in SEED_KEYS} | {"extra": 1}
    with pytest.raises(ValueError, match="extra"):
        AlertPayload.model_validate(payload)


def test_warn_flags_alert_only_where_the_tenant_asks_for_them(demo):
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/a")
    one, two = (with_severity(e, Severity.WARN) for e in critical_entries()[:2])
    audit_record(entry=one)
    assert OutboxMessage.objects.count() == 0
    Tenant.objects.filter(pk=demo.pk).update(alert_on_warn=True)
    audit_record(entry=two)
    assert OutboxMessage.objects.get().record.turn_id == two.turn_id


def test_unflagged_and_info_turns_write_nothing(demo):
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/a")
    quiet = [e for e in graded_entries() if e.grade.severity is Severity.INFO]
    assert quiet
    audit_records_store(quiet)
    assert not OutboxMessage.objects.exists()


def test_a_retried_or_reimported_write_alerts_once(demo):
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/a")
    entries = graded_entries()
    audit_records_store(entries)
    audit_records_store(entries)
    audit_record(entry=critical_entries()[0])
    assert OutboxMessage.objects.count() == len(critical_entries())


def test_an_alert_is_stored_with_its_row_or_not_at_all(demo):
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/a")
    with pytest.raises(RuntimeError), transaction.atomic():
        audit_record(entry=critical_entries()[0])
        assert OutboxMessage.objects.count() == 1
        raise RuntimeError("the transaction that stores the row fails")
    assert not OutboxMessage.objects.exists()
