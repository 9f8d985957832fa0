"""Opening cases: one per flagged record, from both write paths, never twice."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.db import DatabaseError, transaction
from django.db.models import ProtectedError

from lab.accounts.roles import Role
from lab.audit.models import AuditRecord
from lab.audit.services import audit_record, audit_records_store
from lab.operator.acting import act
from lab.operator.cards import Line, transcript_lines
from lab.operator.cases import open_cases
from lab.operator.models import FlagCase
from lab.operator.states import Action
from tests.audit.calls import demo_calls
from tests.operator.conftest import graded

pytestmark = pytest.mark.django_db


def test_every_flagged_record_gets_one_open_case_and_supported_ones_none(demo):
    stored = audit_records_store(graded(demo_calls()[0])).records
    cases = FlagCase.objects.order_by("record_id")
    assert [c.record_id for c in cases] == [r.id for r in stored if r.flagged]
    assert len(cases) == 6
    assert {(c.state, c.version, c.tenant, c.agent) for c in cases} == {
        ("open", 0, "demo", "demo-agent")
    }


def test_a_retried_write_or_a_reimport_opens_no_second_case(demo):
    entries = graded(demo_calls()[0])
    audit_records_store(entries)
    audit_records_store(graded(demo_calls()[0]))
    audit_record(entry=entries[1])
    assert FlagCase.objects.count() == 6
    assert open_cases(AuditRecord.objects.all()) == []
    assert FlagCase.objects.count() == 6


def test_the_single_write_path_opens_a_case_for_a_flagged_turn(demo):
    entries = graded(demo_calls()[0])
    record = audit_record(entry=entries[1])
    assert record.flagged
    assert FlagCase.objects.get().record_id == record.id
    audit_record(entry=entries[0])  # supported
    assert FlagCase.objects.count() == 1


def test_the_migration_opens_cases_for_flags_stored_before_the_queue(demo):
    audit_records_store(graded(demo_calls()[0]))
    FlagCase.objects.all().delete()
    migration = importlib.import_module("lab.operator.migrations.0002_open_existing_flags")
    migration.open_existing_flags(apps, None)
    flagged = AuditRecord.objects.filter(flagged=True).order_by("id")
    assert list(FlagCase.objects.order_by("record_id").values_list("record_id", "state")) == [
        (r.id, "open") for r in flagged
    ]
    migration.open_existing_flags(apps, None)
    assert FlagCase.objects.count() == len(flagged)


def test_a_long_call_is_shown_around_its_flagged_turn():
    call = [
        AuditRecord(id=n, utterance=f"agent {n}", caller_turn=f"caller {n}" if n % 2 else "")
        for n in range(1, 21)
    ]
    lines = transcript_lines(call, flagged=10)
    assert lines[0] == Line("note", "3 earlier agent turns")
    assert lines[-1] == Line("note", "7 later agent turns")
    agent = [line for line in lines if line.speaker == "agent"]
    assert [line.record_id for line in agent] == list(range(4, 14))
    assert [line.record_id for line in agent if line.highlighted] == [10]
    # A caller line is shown once before the agent turns that answer it.
    assert [line.text for line in lines[1:4]] == ["agent 4", "caller 5", "agent 5"]


def test_an_audit_record_is_never_deleted_whether_or_not_its_case_was_acted_on(members):
    stored = audit_records_store(graded(demo_calls()[0])).records
    first, second = [r for r in stored if r.flagged][:2]
    act(
        tenant="demo",
        case_id=second.case.id,
        actor=members[Role.OPERATOR],
        action=Action.ACKNOWLEDGE,
        expected_version=0,
    )
    # The database refuses the record's deletion, and the case it would have taken goes back.
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditRecord.objects.filter(pk=first.pk).delete()
    assert FlagCase.objects.filter(record_id=first.pk).exists()
    with pytest.raises(ProtectedError):
        AuditRecord.objects.filter(pk=second.pk).delete()
    assert FlagCase.objects.filter(record_id=second.pk).exists()
