"""A write whose answer is lost (commit_answer_lost): the sandbox holds it, the agent hears it may
have run; a retry on the gate's key replays it, a retry on a new key books twice."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.types import Channel, CommitReconciled, CommitStarted, Mode
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import Fault
from lab.tools.models import Appointment

pytestmark = pytest.mark.django_db(transaction=True)


async def played(mode: Mode) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id="commit_answer_lost", mode=mode, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=contract_get("commit_answer_lost"))
    await session.start()
    await session.play_script()
    return session


@database_sync_to_async
def booked(session: RunSession) -> list[str]:
    return list(Appointment.objects.filter(run=session.run).values_list("slot__slot_id", flat=True))


def keys(session: RunSession) -> list[str]:
    return [
        e.payload.idempotency_key for e in session.events if isinstance(e.payload, CommitStarted)
    ]


async def test_guarded_the_retry_replays_the_lost_write_and_the_run_passes(fast_clock):
    session = await played(Mode.GUARDED)
    first, retry = keys(session)
    assert first == retry  # the gate replays the key of the write that may have run
    assert await booked(session) == ["tue-0930"]
    failed = next(e.payload for e in session.events if e.type == "tool.commit.failed")
    assert failed.failure_kind == "timeout" and "may have run" in failed.reason
    decisions = [e.payload for e in session.events if e.type == "gate.decision"]
    assert decisions[-1].reason_kind == "uncertain_outcome"
    # The lost answer is recorded before the run ends: the write the sandbox holds, once.
    reconciled = [e.payload for e in session.events if isinstance(e.payload, CommitReconciled)]
    assert [(r.trigger, r.receipt is not None) for r in reconciled] == [("run_ending", True)]
    assert session.events[-1].type == "run.ended"
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason


async def test_as_is_the_retry_on_a_new_key_books_twice_and_the_run_fails(fast_clock):
    session = await played(Mode.UNGUARDED)
    first, retry = keys(session)
    assert retry == f"{first}-retry1"
    assert await booked(session) == ["tue-0930", "tue-0930"]
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL
    assert "booked_once by" in evaluation.reason


def test_only_a_write_can_lose_its_answer() -> None:
    with pytest.raises(ValueError, match="only a commit's answer can be lost"):
        Fault(operation="lookup", attempt=1, kind="lost_answer")
