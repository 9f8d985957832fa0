from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from django.db import DatabaseError, transaction
from django.db.models import ProtectedError

from lab.audit.imported import grade_transcript
from lab.audit.models import AuditRecord
from lab.audit.schema import AuditChannel, AuditEntry, is_flagged
from lab.audit.selectors import (
    audit_entry,
    audit_record_out,
    audit_records_for_agent,
    audit_records_for_call,
    audit_records_for_tenant,
)
from lab.audit.services import audit_record, audit_records_store
from lab.audit.transcript import parse_transcript
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.facts.loader import load_tenant
from lab.grading.grader import DeterministicGrader
from lab.grading.grounding import GroundingVerdict
from lab.grading.schema import Verdict
from lab.runs.services import run_start
from tests.audit.calls import demo_calls, jsonl

pytestmark = pytest.mark.django_db
FACTS = load_tenant("demo")
AT = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


def entries(agent: str = "demo-agent") -> list[AuditEntry]:
    turns = parse_transcript(jsonl(demo_calls()[0]), max_bytes=1 << 20)
    return grade_transcript(
        turns,
        constraints=FACTS,
        tenant="demo",
        agent=agent,
        grader=DeterministicGrader(),
        graded_at=AT,
        timer=time.perf_counter,
    )


def test_a_stored_record_gives_back_exactly_the_entry_it_was_written_from():
    entry = entries()[0]
    record = audit_record(entry=entry)
    assert audit_entry(AuditRecord.objects.get(pk=record.pk)) == entry
    out = audit_record_out(record)
    assert (out.ref, out.entry.channel) == (f"audit_{record.id}", AuditChannel.IMPORTED)
    assert record.constraint_list_digest == FACTS.digest()
    assert (record.constraint_list_version, record.knowledge_base_version) == ("demo_v1", "")


def test_the_same_entry_is_stored_once_however_often_it_is_written():
    batch = entries()
    first = audit_records_store(batch)
    again = audit_records_store(entries())  # graded anew: other latencies, same content
    assert (first.created, again.created) == (len(batch), 0)
    assert [r.id for r in first.records] == [r.id for r in again.records]
    assert audit_record(entry=batch[0]).id == first.records[0].id
    assert AuditRecord.objects.count() == len(batch)


def test_the_database_refuses_to_change_a_stored_record():
    record = audit_record(entry=entries()[1])
    assert record.verdict == "unsupported"
    with pytest.raises(DatabaseError, match="written once"), transaction.atomic():
        AuditRecord.objects.filter(pk=record.pk).update(verdict="supported")
    record.verdict = "supported"
    with pytest.raises(DatabaseError, match="written once"), transaction.atomic():
        record.save()
    assert AuditRecord.objects.get(pk=record.pk).verdict == "unsupported"


def test_a_correction_is_a_new_row_that_names_the_one_it_corrects():
    original = audit_record(entry=entries()[1])
    correction = audit_record(entry=entries()[1], corrects=original)
    assert correction.id != original.id and correction.corrects_id == original.id
    assert list(original.corrections.all()) == [correction]
    assert audit_record_out(correction).corrects == original.id


def test_flags_are_unsupported_or_uncertain_claims_and_bad_citations():
    stored = audit_records_store(entries()).records
    for record in stored:
        expected = record.verdict in ("unsupported", "llm_flagged") or (
            record.grounding_verdict in ("no_marker", "orphan_marker")
        )
        assert record.flagged is expected
    assert any(r.flagged for r in stored) and not all(r.flagged for r in stored)
    assert not is_flagged(Verdict.OUT_OF_SCOPE, GroundingVerdict.EMPTY_RETRIEVAL)


def test_selectors_read_newest_first_per_agent_and_tenant_with_a_cursor():
    audit_records_store(entries("agent-a"))
    audit_records_store(entries("agent-b"))
    mine = audit_records_for_agent(tenant="demo", agent="agent-b", limit=5)
    assert [r.agent for r in mine] == ["agent-b"] * 5
    ids = [r.id for r in mine]
    assert ids == sorted(ids, reverse=True)
    rest = audit_records_for_agent(tenant="demo", agent="agent-b", limit=200, before=ids[-1])
    assert len(mine) + len(rest) == len(entries()) and max(r.id for r in rest) < ids[-1]
    everyone = audit_records_for_tenant(tenant="demo", limit=200)
    assert {r.agent for r in everyone} == {"agent-a", "agent-b"}
    assert audit_records_for_tenant(tenant="other", limit=10) == []
    call = list(audit_records_for_call(tenant="demo", call_id="price1"))
    assert [r.agent for r in call] == ["agent-a", "agent-b"]
    with pytest.raises(ValueError, match="between 1 and 200"):
        audit_records_for_tenant(tenant="demo", limit=0)


def test_a_live_turn_records_its_run_and_a_run_with_records_is_kept():
    run = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED)
    entry = entries()[0].model_copy(update={"run_id": run.id, "channel": AuditChannel.TYPED})
    record = audit_record(entry=entry, run=run)
    assert list(run.audit_records.all()) == [record]
    with pytest.raises(ValueError, match="names run"):
        audit_record(entry=entries()[0], run=run)
    with pytest.raises(ProtectedError):
        Run.objects.filter(pk=run.pk).delete()
