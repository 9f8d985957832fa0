"""Reconciled commits count as what the sandbox says; a commit with no outcome proves nothing."""

from __future__ import annotations

from collections.abc import Callable

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import AssertionState
from lab.events.chain import EventChain
from lab.events.types import (
    CommitReconciled,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
)
from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import Assertion, AssertionKind
from tests.evaluation.logs import scenario_log

KINDS = ("single_execution", "commit_confirmed_explicitly", "commit_uses_latest_revision")
CONTRACT = contract_get("double_confirmation").model_copy(
    update={
        "assertions": [
            Assertion(id=kind, kind=AssertionKind(kind), description=kind) for kind in KINDS
        ]
    }
)
Rewrite = Callable[[EventPayload], EventPayload | None]


def rewritten(rewrite: Rewrite) -> list[Event]:
    """The guarded double-confirmation log with each payload rewritten (None drops it)."""
    chain = EventChain()
    for event in scenario_log("double_confirmation", guarded=True).events:
        payload = rewrite(event.payload)
        if payload is not None:
            chain.append(payload, at=event.at)
    return chain.events


def states(events: list[Event]) -> dict[str, tuple[AssertionState, list[str], str]]:
    return {
        r.kind.value: (r.state, r.supporting, r.reason)
        for r in evaluate(CONTRACT, events).assertions
    }


def reconciled_instead(payload: EventPayload) -> EventPayload | None:
    """The first receipt arrives as a reconciliation, as after a crash in the write window."""
    if isinstance(payload, CommitSucceeded) and not payload.replayed:
        return CommitReconciled(
            attempt_id=payload.attempt_id,
            idempotency_key=payload.receipt.idempotency_key,
            receipt=payload.receipt,
            trigger="recovery",
            evidence="the sandbox holds it",
        )
    return payload


def test_a_reconciled_receipt_is_an_execution_with_its_authorization_chain() -> None:
    events = rewritten(reconciled_instead)
    reconciled = next(e.id for e in events if e.type == "tool.commit.reconciled")
    found = states(events)
    for kind in KINDS:
        state, supporting, _ = found[kind]
        assert state is AssertionState.SUPPORTED and reconciled in supporting, kind


def test_a_reconciled_execution_without_a_confirmation_is_contradicted() -> None:
    def unconfirmed(payload: EventPayload) -> EventPayload | None:
        payload = reconciled_instead(payload)
        if isinstance(payload, CommitStarted) and payload.attempt_id == "cm-1":
            return payload.model_copy(update={"confirmation_event_id": None})
        return payload

    state, _, reason = states(rewritten(unconfirmed))["commit_confirmed_explicitly"]
    assert state is AssertionState.CONTRADICTED and "confirmation" in reason


def without_the_replay(payload: EventPayload) -> EventPayload | None:
    """The second attempt is started, and then the log says nothing more about it."""
    if isinstance(payload, CommitSucceeded) and payload.replayed:
        return None
    return payload


def test_a_commit_attempt_with_no_recorded_outcome_leaves_single_execution_unproven() -> None:
    state, _, reason = states(rewritten(without_the_replay))["single_execution"]
    assert state is AssertionState.NO_EVIDENCE
    assert "cm-2" in reason and "no recorded outcome" in reason


def test_a_reconciliation_that_found_nothing_settles_the_attempt() -> None:
    def settled(payload: EventPayload) -> EventPayload | None:
        if isinstance(payload, CommitSucceeded) and payload.replayed:
            return CommitReconciled(
                attempt_id=payload.attempt_id,
                idempotency_key=payload.receipt.idempotency_key,
                receipt=None,
                trigger="recovery",
                evidence="no execution",
            )
        return payload

    state, _, _ = states(rewritten(settled))["single_execution"]
    assert state is AssertionState.SUPPORTED
