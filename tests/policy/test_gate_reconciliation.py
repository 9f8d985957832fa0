"""The gate's fold of uncertain, reconciled and unauthorized commit attempts."""

from __future__ import annotations

from lab.events.chain import digest
from lab.events.types import (
    Action,
    CommitFailed,
    CommitReconciled,
    CommitStarted,
    CommitUncertain,
    Outcome,
    Receipt,
)
from tests.policy.test_gate import FRIDAY, TUESDAY, Usual, usual


def receipt(run: Usual) -> Receipt:
    return Receipt(
        receipt_id="rc-1",
        execution_id="ex-1",
        idempotency_key=run.key(),
        adapter="appointments",
        action=Action.BOOK,
        args=TUESDAY,
    )


def started_uncertain(run: Usual) -> None:
    _, allowed = run.log.ask(run.commit_request())
    run.log.commit_started(allowed, "cm-1")
    run.log.add(CommitUncertain(attempt_id="cm-1", reason="no answer within 2000 ms"))


def test_a_confirmation_while_a_commit_is_uncertain_replays_it_as_in_flight() -> None:
    run = usual()
    started_uncertain(run)
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.REPLAY, "in_flight")
    assert decision.idempotency_key == run.key()


def test_a_reconciled_receipt_is_the_keys_receipt_and_a_later_confirmation_replays_it() -> None:
    run = usual()
    started_uncertain(run)
    reconciled = run.log.add(
        CommitReconciled(
            attempt_id="cm-1",
            idempotency_key=run.key(),
            receipt=receipt(run),
            trigger="timeout",
            evidence="it ran",
        )
    )
    assert run.log.gate.receipt_for(run.key()) == receipt(run)
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.REPLAY, "already_executed")
    assert decision.rests_on[0] == reconciled.id


def test_a_commit_reconciled_as_not_executed_is_never_run_again() -> None:
    run = usual()
    started_uncertain(run)
    run.log.add(
        CommitReconciled(
            attempt_id="cm-1",
            idempotency_key=run.key(),
            receipt=None,
            trigger="recovery",
            evidence="nothing",
        )
    )
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "commit_failed")
    assert "not_executed" in decision.reason


def test_an_attempt_refused_as_unauthorized_leaves_the_key_as_it_was() -> None:
    run = usual()
    _, allowed = run.log.ask(run.commit_request())
    key = run.key()
    run.log.add(
        CommitStarted(
            attempt_id="cm-1",
            idempotency_key=key,
            action=Action.BOOK,
            args=FRIDAY,
            args_hash=digest(FRIDAY),
            revision=1,
            proposal_id="p1",
            confirmation_event_id=run.confirmation.id,
            authorized_by=allowed.id,
        )
    )
    run.log.add(CommitFailed(attempt_id="cm-1", failure_kind="unauthorized", reason="forged"))
    decision = run.log.gate.decide(run.commit_request())
    # Still authorized and unexecuted: the genuine request replays the key, it is not blocked.
    assert (decision.outcome, decision.reason_kind) == (Outcome.REPLAY, "in_flight")
    assert decision.rests_on[0] == allowed.id
