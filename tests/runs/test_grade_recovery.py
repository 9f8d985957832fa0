"""A process killed between an agent utterance and its grade: the report reads incomplete, not
tampered, and reopening the run (or the start-up sweep) records the grade, marked as recovered."""

from __future__ import annotations

import asyncio
import io

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command

from lab.accounts.agents import AgentRef
from lab.audit.models import AuditRecord
from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Event, Mode
from lab.reports.export import report_bytes
from lab.reports.services import report_for_run, report_verify
from lab.runs import grading
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get

pytestmark = pytest.mark.django_db(transaction=True)
CONTRACT = contract_get("double_confirmation")


class Crash(Exception):
    """Stands for kill -9: nothing after the event that raised it is recorded."""


async def crash_after_an_answer() -> tuple[Run, str]:
    """The agent's answer to the caller's first line is stored; the process dies at once."""
    # A run for demo's agent: a public run would write no audit rows to recover.
    run = await database_sync_to_async(run_start)(
        scenario_id=CONTRACT.id,
        mode=Mode.GUARDED,
        channel=Channel.TYPED,
        tenant_agent=AgentRef("demo", "demo-agent"),
    )
    session = RunSession(run=run, contract=CONTRACT)

    async def die_after_the_answer(event: Event) -> None:
        heard = any(e.type == "caller.utterance" for e in session.events)
        if event.type == "agent.utterance" and heard:
            raise Crash

    await session.start()
    session.listeners.append(die_after_the_answer)
    with pytest.raises(Crash):
        await session.caller_says("I'd like Thursday morning, please.")
    session.close()
    stored = await database_sync_to_async(store.run_events)(run)
    assert stored[-1].type == "agent.utterance"
    return run, stored[-1].id


def verified(run: Run):
    return report_verify(report_bytes(report_for_run(Run.objects.get(pk=run.pk))))


def recovered_in(events: list[Event], utterance: str) -> list[str]:
    return [
        e.type
        for e in events
        if getattr(e.payload, "utterance_event_id", None) == utterance
        and e.type.startswith("turn.")
    ]


async def test_the_report_of_the_killed_run_is_incomplete_not_inconsistent(fast_clock):
    run, _ = await crash_after_an_answer()
    verification = await database_sync_to_async(verified)(run)
    assert verification.consistent, verification.problems()
    assert verification.incomplete and verification.origin_proven
    assert "INCONSISTENT" not in verification.summary("r.json")


async def test_reopening_the_run_records_the_grade_as_recovered_and_its_audit_row(fast_clock):
    run, utterance = await crash_after_an_answer()
    events = await database_sync_to_async(store.run_events)(run)
    session = RunSession(run=run, contract=CONTRACT, events=events)
    await session.start()
    assert recovered_in(session.events, utterance) == [
        "turn.grade_recovered",
        "turn.graded",
        "turn.grounding",
    ]
    rows = AuditRecord.objects.filter(run=run, turn_id=utterance)
    assert await database_sync_to_async(rows.count)() == 1
    await session.end(reason_kind="completed", reason="the caller hung up")
    verification = await database_sync_to_async(verified)(run)
    assert verification.consistent and not verification.incomplete
    kinds = [f.kind for result in verification.checks for f in result.findings]
    assert "grade_recovered" in kinds
    # Reopened again, nothing is left to recover.
    again = RunSession(
        run=run, contract=CONTRACT, events=await database_sync_to_async(store.run_events)(run)
    )
    await again.start()
    assert recovered_in(again.events, utterance).count("turn.grade_recovered") == 1


def test_the_start_up_sweep_recovers_the_grade_of_every_active_run(fast_clock):
    run, utterance = asyncio.run(crash_after_an_answer())
    call_command("reconcileruns", stdout=io.StringIO())
    events = store.run_events(run)
    assert [e.type for e in events[-3:]] == [
        "turn.grade_recovered",
        "turn.graded",
        "turn.grounding",
    ]
    assert AuditRecord.objects.filter(run=run, turn_id=utterance).exists()
    assert verified(run).consistent


async def test_an_audit_row_the_dead_process_never_wrote_is_written_on_reopening(
    fast_clock, monkeypatch
):
    run = await database_sync_to_async(run_start)(
        scenario_id=CONTRACT.id,
        mode=Mode.GUARDED,
        channel=Channel.TYPED,
        tenant_agent=AgentRef("demo", "demo-agent"),
    )
    session = RunSession(run=run, contract=CONTRACT)
    await session.start()
    real = grading.audit_record

    def dies(**kwargs):
        raise Crash

    monkeypatch.setattr(grading, "audit_record", dies)
    with pytest.raises(Crash):
        await session.caller_says("I'd like Thursday morning, please.")
    session.close()
    monkeypatch.setattr(grading, "audit_record", real)
    events = await database_sync_to_async(store.run_events)(run)
    assert events[-1].type == "turn.grounding"
    turn = events[-1].payload.utterance_event_id
    session = RunSession(run=run, contract=CONTRACT, events=events)
    await session.start()
    assert "turn.grade_recovered" not in [e.type for e in session.events]
    rows = AuditRecord.objects.filter(run=run, turn_id=turn)
    assert await database_sync_to_async(rows.exists)()
