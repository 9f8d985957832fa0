"""The write adapters execute only what a recorded gate decision authorized, once per key."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from lab.events import store
from lab.events.chain import chain_event, digest
from lab.events.models import Run
from lab.events.types import (
    Action,
    Args,
    Channel,
    Event,
    GateDecision,
    GateRequest,
    Mode,
    Operation,
    Outcome,
)
from lab.policy.gate import idempotency_key
from lab.runs.services import run_start
from lab.tools.adapters import ADAPTERS, CommitRejected, execution_settle
from lab.tools.authorization import Authorization, CommitRequest
from lab.tools.models import Appointment, ToolExecution

pytestmark = pytest.mark.django_db

THURSDAY: Args = {"slot_id": "thu-0900", "day": "thursday", "time": "09:00"}
FRIDAY: Args = {"slot_id": "fri-1000", "day": "friday", "time": "10:00"}
CALENDAR = ADAPTERS["calendar"]


def guarded_run() -> Run:
    run = run_start(scenario_id="double_confirmation", mode=Mode.GUARDED, channel=Channel.TYPED)
    CALENDAR.load(run)
    return run


def stored_decision(run: Run, args: Args, *, seq: int = 1) -> Event:
    """A gate decision allowing proposal p-1 of revision 1 with args, stored in run's log."""
    key = idempotency_key(run_id=str(run.id), proposal_id="p-1", args_hash=digest(args))
    decision = GateDecision(
        request=GateRequest(
            operation=Operation.COMMIT,
            action=Action.BOOK,
            revision=1,
            args=args,
            proposal_id="p-1",
            confirmation_event_id="ev-00009",
        ),
        outcome=Outcome.ALLOW,
        reason_kind="confirmed",
        reason="confirmed",
        rests_on=[],
        idempotency_key=key,
    )
    event = chain_event(seq=seq, at=datetime.now(UTC), payload=decision, prev_hash="0" * 64)
    store.event_append(run=run, event=event)
    return event


def request(authorization: Authorization, args: Args, **changes: Any) -> CommitRequest:
    base = CommitRequest(
        action=Action.BOOK,
        revision=1,
        proposal_id="p-1",
        args=args,
        idempotency_key=authorization.idempotency_key,
    )
    return replace(base, **changes)


def test_the_authorized_request_executes_once_and_replays_its_receipt() -> None:
    run = guarded_run()
    authorization = Authorization.from_decision(stored_decision(run, THURSDAY))
    first = CALENDAR.commit(run, authorization, request(authorization, THURSDAY))
    again = CALENDAR.commit(run, authorization, request(authorization, THURSDAY))
    assert (first.replayed, again.replayed) == (False, True)
    assert again.receipt == first.receipt
    assert Appointment.objects.filter(run=run).count() == 1


def test_a_gate_authorization_presented_with_other_arguments_executes_nothing() -> None:
    run = guarded_run()
    authorization = Authorization.from_decision(stored_decision(run, THURSDAY))
    with pytest.raises(CommitRejected) as refused:
        CALENDAR.commit(run, authorization, request(authorization, FRIDAY))
    assert refused.value.kind == "unauthorized"
    assert "arguments" in refused.value.reason
    assert not ToolExecution.objects.filter(run=run).exists()
    assert not Appointment.objects.filter(run=run).exists()
    # The run's own authorized commit still goes through afterwards.
    result = CALENDAR.commit(run, authorization, request(authorization, THURSDAY))
    assert result.receipt.args == THURSDAY and not result.replayed


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"revision": 2}, "revision"),
        ({"proposal_id": "p-2"}, "proposal"),
        ({"idempotency_key": "another-key"}, "idempotency key"),
        ({"action": Action.REFUND}, "does not refund"),
    ],
)
def test_a_request_departing_from_the_grant_in_any_field_is_refused(
    changes: dict[str, Any], named: str
) -> None:
    run = guarded_run()
    authorization = Authorization.from_decision(stored_decision(run, THURSDAY))
    with pytest.raises(CommitRejected) as refused:
        CALENDAR.commit(run, authorization, request(authorization, THURSDAY, **changes))
    assert named in refused.value.reason
    assert not ToolExecution.objects.filter(run=run).exists()


def test_an_authorization_whose_decision_the_log_does_not_hold_is_refused() -> None:
    run = guarded_run()
    other = guarded_run()
    # A decision stored in another run's log authorizes nothing in this one.
    authorization = Authorization.from_decision(stored_decision(other, THURSDAY))
    with pytest.raises(CommitRejected) as refused:
        CALENDAR.commit(run, authorization, request(authorization, THURSDAY))
    assert refused.value.kind == "unauthorized"
    assert not ToolExecution.objects.exists()


def test_a_forged_grant_on_a_real_decision_id_is_refused() -> None:
    run = guarded_run()
    genuine = Authorization.from_decision(stored_decision(run, THURSDAY))
    forged_event = stored_decision(guarded_run(), FRIDAY)
    forged = Authorization.from_decision(
        forged_event.model_copy(update={"id": genuine.decision_event_id})
    )
    with pytest.raises(CommitRejected) as refused:
        CALENDAR.commit(run, forged, request(forged, FRIDAY))
    assert "not a recorded gate decision" in refused.value.reason
    assert not ToolExecution.objects.exists()


def test_the_unguarded_label_executes_only_in_an_unguarded_run() -> None:
    guarded = guarded_run()
    label = Authorization.unguarded(f"unguarded-{guarded.id}-ev-00009")
    with pytest.raises(CommitRejected) as refused:
        CALENDAR.commit(guarded, label, request(label, THURSDAY))
    assert refused.value.kind == "unauthorized"
    unguarded = run_start(
        scenario_id="double_confirmation", mode=Mode.UNGUARDED, channel=Channel.TYPED
    )
    CALENDAR.load(unguarded)
    label = Authorization.unguarded(f"unguarded-{unguarded.id}-ev-00009")
    assert not CALENDAR.commit(unguarded, label, request(label, FRIDAY)).replayed


def test_settling_an_unexecuted_key_voids_it_so_a_late_write_cannot_run() -> None:
    run = guarded_run()
    authorization = Authorization.from_decision(stored_decision(run, THURSDAY))
    key = authorization.idempotency_key
    assert execution_settle(run=run, idempotency_key=key, args_hash=digest(THURSDAY)) is None
    with pytest.raises(CommitRejected) as refused:
        CALENDAR.commit(run, authorization, request(authorization, THURSDAY))
    assert "not executed" in refused.value.reason
    assert not Appointment.objects.filter(run=run).exists()


def test_settling_an_executed_key_returns_its_receipt_for_those_arguments_only() -> None:
    run = guarded_run()
    authorization = Authorization.from_decision(stored_decision(run, THURSDAY))
    executed = CALENDAR.commit(run, authorization, request(authorization, THURSDAY))
    key = authorization.idempotency_key
    assert execution_settle(run=run, idempotency_key=key, args_hash=digest(THURSDAY)) == (
        executed.receipt
    )
    assert execution_settle(run=run, idempotency_key=key, args_hash=digest(FRIDAY)) is None
