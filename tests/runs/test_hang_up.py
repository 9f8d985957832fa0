"""The caller hangs up mid-commit (hangup_mid_commit): the write in flight is settled from the
sandbox before the run ends, and a log that leaves its outcome unknown is never a PASS."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import AssertionState, Verdict
from lab.events.types import Channel, CommitReconciled, Mode
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import Contract
from lab.tools.models import Appointment

pytestmark = pytest.mark.django_db(transaction=True)


async def played(mode: Mode) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id="hangup_mid_commit", mode=mode, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=contract_get("hangup_mid_commit"))
    await session.start()
    await session.play_script()
    return session


@database_sync_to_async
def booked(session: RunSession) -> list[str]:
    rows = Appointment.objects.filter(run=session.run)
    return list(rows.values_list("slot__slot_id", flat=True))


async def test_the_write_in_flight_at_the_hang_up_is_reconciled_and_the_run_passes(fast_clock):
    session = await played(Mode.GUARDED)
    types = [e.type for e in session.events]
    # Hung up at the write's start: nothing follows it but its settlement and the end.
    assert types[-3:] == ["tool.commit.started", "tool.commit.reconciled", "run.ended"]
    reconciled = session.events[-2].payload
    assert isinstance(reconciled, CommitReconciled)
    assert reconciled.trigger == "run_ending" and reconciled.receipt is not None
    assert await booked(session) == ["mon-0900"]
    ended = session.events[-1].payload
    assert ended.reason_kind == "completed" and "hung up while" in ended.reason
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason


async def test_a_log_that_lost_the_writes_outcome_fails_instead_of_passing_by_silence(
    fast_clock,
):
    session = await played(Mode.GUARDED)
    lost = [e for e in session.events if e.type != "tool.commit.reconciled"]
    evaluation = evaluate(session.contract, lost)
    assert evaluation.verdict is Verdict.FAIL
    outcome = next(a for a in evaluation.assertions if a.id == "outcome_recorded")
    started = next(e.id for e in lost if e.type == "tool.commit.started")
    assert outcome.state is AssertionState.CONTRADICTED
    assert set(outcome.contradicting) == {started, lost[-1].id}


async def test_as_is_the_agent_books_on_sounds_good_and_the_run_fails(fast_clock):
    session = await played(Mode.UNGUARDED)
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL
    assert "positive_is_not_yes by" in evaluation.reason
    # Every write it made still has its outcome in the log.
    outcome = next(a for a in evaluation.assertions if a.id == "outcome_recorded")
    assert outcome.state is AssertionState.SUPPORTED


def test_only_the_last_line_can_hang_up() -> None:
    data = contract_get("hangup_mid_commit").model_dump(mode="json")
    data["caller"][1]["hang_up_on"] = "commit"
    with pytest.raises(ValueError, match="only the last caller line can hang up"):
        Contract.model_validate(data)
