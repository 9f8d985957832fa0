"""The per-day counters: always a row-by-row count of the audit rows, however they were written."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lab.audit.daily import counted, rebuild, utc_day
from lab.audit.models import AuditDay, AuditRecord
from lab.audit.schema import AuditEntry
from lab.audit.services import audit_record, audit_records_store
from tests.api.world import graded

pytestmark = pytest.mark.django_db
MIDNIGHT = datetime(2026, 3, 2, tzinfo=UTC)
# West of UTC, so a local evening can be the next UTC day.
NEW_YORK = timezone(timedelta(hours=-5))


def rows_counted() -> Counter[tuple[object, ...]]:
    """The oracle: each stored row looked at in Python, its day from its own timestamp."""
    return Counter(
        (r.tenant, utc_date, r.agent, r.verdict, r.grounding_verdict, r.flagged)
        for r in AuditRecord.objects.all()
        for utc_date in [r.graded_at.astimezone(UTC).date()]
    )


def counters() -> Counter[tuple[object, ...]]:
    return Counter(
        {
            (d.tenant, d.day, d.agent, d.verdict, d.grounding_verdict, d.flagged): d.turns
            for d in AuditDay.objects.all()
        }
    )


def entry(template: int, tenant: str, agent: str, call: int, minutes: int) -> AuditEntry:
    """A graded turn, re-homed: its identity is (tenant, agent, call, template)."""
    base = graded()[template % len(graded())]
    moment = (MIDNIGHT + timedelta(minutes=minutes)).astimezone(NEW_YORK)
    return base.model_copy(
        update={
            "tenant": tenant,
            "agent": agent,
            "call_id": f"call-{call}",
            "turn_id": f"call-{call}-{template}",
            "graded_at": moment,
        }
    )


entries = st.builds(
    entry,
    template=st.integers(0, 40),
    tenant=st.sampled_from(["acme", "globex"]),
    agent=st.sampled_from(["front-desk", "after-hours"]),
    # A few calls only, so the same turn comes again (a retry, a re-imported file).
    call=st.integers(0, 3),
    # Either side of a UTC midnight, three days of it.
    minutes=st.integers(-36 * 60, 36 * 60),
)
batches = st.lists(
    st.tuples(st.booleans(), st.lists(entries, min_size=1, max_size=12)), min_size=1, max_size=5
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batches=batches)
def test_the_counters_are_a_row_by_row_count_after_any_batches(batches):
    with transaction.atomic():
        for one_by_one, batch in batches:
            if one_by_one:
                for item in batch:
                    audit_record(entry=item)
            else:
                audit_records_store(batch)
            assert counters() == rows_counted()
        assert sum(counters().values()) == AuditRecord.objects.count()
        assert Counter(dict(counted())) == rows_counted()
        transaction.set_rollback(True)


def test_a_retried_batch_adds_nothing():
    batch = [entry(n, "acme", "front-desk", 1, n * 30) for n in range(20)]
    assert audit_records_store(batch).created == 20
    once = counters()
    assert audit_records_store(batch).created == 0
    audit_record(entry=batch[0])
    assert counters() == once == rows_counted() and sum(once.values()) == 20


def test_rebuild_recounts_from_the_rows():
    audit_records_store([entry(n, "globex", "globex-bot", 3, n * 90) for n in range(30)])
    want = counters()
    AuditDay.objects.filter(pk=AuditDay.objects.first().pk).delete()
    AuditDay.objects.update(turns=99)
    assert rebuild() == len(want)
    assert counters() == want == rows_counted()
    AuditDay.objects.all().delete()
    call_command("rebuild_audit_days", verbosity=0)
    assert counters() == want


def test_the_day_is_the_utc_date_of_the_grade():
    evening = datetime(2026, 3, 1, 21, 0, tzinfo=NEW_YORK)  # 02:00 UTC the next day
    assert utc_day(evening) == date(2026, 3, 2)
    assert utc_day(datetime(2026, 3, 1, 23, 59)) == date(2026, 3, 1)
    audit_record(
        entry=entry(0, "acme", "front-desk", 9, 0).model_copy(update={"graded_at": evening})
    )
    assert list(AuditDay.objects.values_list("day", "turns")) == [(date(2026, 3, 2), 1)]
