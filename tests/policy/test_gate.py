"""Unit tests for the policy gate: one or more per rule and per reason_kind."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

import pytest

from lab.events.chain import EventChain, digest
from lab.events.types import (
    Action,
    AgentInterrupted,
    AgentUtterance,
    Args,
    CallerUnderstood,
    CallerUtterance,
    Channel,
    CommitFailed,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    GateDecision,
    GateRequest,
    IntentRevised,
    LateResultRejected,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Mode,
    Operation,
    Outcome,
    ProposalExpired,
    ProposalMade,
    Receipt,
    RunStarted,
    SpeechStarted,
    UnderstandingKind,
)
from lab.policy.gate import GATE_VERSION, GateState, idempotency_key

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RUN_ID = "run-1"
TUESDAY: Args = {"day": "tuesday", "time": "10:00"}
FRIDAY: Args = {"day": "friday", "time": "15:00"}


class Log:
    """A run's chained log with the gate folded in step; the gate's reactions are recorded too."""

    def __init__(self) -> None:
        self.chain = EventChain()
        self.gate = GateState()
        self.revision = 0

    @property
    def events(self) -> list[Event]:
        return self.chain.events

    def add(self, payload: EventPayload, *, react: bool = True) -> Event:
        at = T0 + timedelta(milliseconds=len(self.chain.events) + 1)
        event = self.chain.append(payload, at=at)
        self.gate.apply(event)
        if react:
            for reaction in self.gate.reactions(event):
                self.add(reaction)
        return event

    def start(self) -> Event:
        return self.add(
            RunStarted(
                run_id=RUN_ID,
                scenario_id="book-appointment",
                scenario_version=1,
                contract_hash="c" * 64,
                mode=Mode.GUARDED,
                channel=Channel.TYPED,
                evaluator_version="eval-1",
                gate_version=GATE_VERSION,
                agent_version="agent-1",
            )
        )

    def say(self, kind: UnderstandingKind, *, text: str = "...", args: Args | None = None) -> Event:
        utterance = self.add(CallerUtterance(text=text, source="script"))
        return self.add(
            CallerUnderstood(
                utterance_event_id=utterance.id,
                kind=kind,
                action=Action.BOOK if args is not None else None,
                args=args or {},
            )
        )

    def revise(self, args: Args, *, react: bool = True) -> Event:
        kind = UnderstandingKind.CORRECTION if self.revision else UnderstandingKind.REQUEST
        understood = self.say(kind, args=args)
        self.revision += 1
        return self.add(
            IntentRevised(
                revision=self.revision,
                action=Action.BOOK,
                args=args,
                supersedes=self.revision - 1 or None,
                understood_event_id=understood.id,
            ),
            react=react,
        )

    def lookup_started(self, attempt_id: str, *, revision: int | None = None) -> Event:
        revision = revision or self.revision
        attempt = sum(1 for e in self.events if isinstance(e.payload, LookupStarted)) + 1
        return self.add(
            LookupStarted(
                attempt_id=attempt_id,
                attempt=attempt,
                revision=revision,
                action=Action.BOOK,
                query={},
            )
        )

    def lookup_succeeded(self, attempt_id: str, options: list[Args]) -> Event:
        return self.add(LookupSucceeded(attempt_id=attempt_id, options=options))

    def lookup_failed(
        self, attempt_id: str, kind: Literal["timeout", "error"] = "timeout"
    ) -> Event:
        return self.add(LookupFailed(attempt_id=attempt_id, failure_kind=kind, reason="no answer"))

    def propose(self, proposal_id: str, args: Args, *, grounded_on: str | None = None) -> Event:
        return self.add(
            ProposalMade(
                proposal_id=proposal_id,
                revision=self.revision,
                action=Action.BOOK,
                args=args,
                args_hash=digest(args),
                grounded_on=grounded_on,
            )
        )

    def readback(self, proposal_id: str) -> Event:
        return self.add(
            AgentUtterance(
                text="Shall I book that?",
                purpose="readback",
                duration_ms=1800,
                proposal_id=proposal_id,
            )
        )

    def interrupt(self, utterance: Event) -> Event:
        speech = self.add(SpeechStarted(stream_ms=1000))
        return self.add(
            AgentInterrupted(
                utterance_event_id=utterance.id,
                cause_event_id=speech.id,
                heard_ms=600,
                heard_text="Shall I",
            )
        )

    def ask(self, request: GateRequest) -> tuple[GateDecision, Event]:
        decision = self.gate.decide(request)
        return decision, self.add(decision)

    def commit_started(self, authorized: Event, attempt_id: str) -> Event:
        decision = authorized.payload
        assert isinstance(decision, GateDecision)
        request = decision.request
        assert request.proposal_id is not None and decision.idempotency_key is not None
        return self.add(
            CommitStarted(
                attempt_id=attempt_id,
                idempotency_key=decision.idempotency_key,
                action=request.action,
                args=request.args,
                args_hash=digest(request.args),
                revision=request.revision,
                proposal_id=request.proposal_id,
                confirmation_event_id=request.confirmation_event_id,
                authorized_by=authorized.id,
            )
        )

    def commit_succeeded(self, attempt_id: str, key: str, *, replayed: bool = False) -> Event:
        receipt = Receipt(
            receipt_id="rc-1",
            execution_id="ex-1",
            idempotency_key=key,
            adapter="appointments",
            action=Action.BOOK,
            args=TUESDAY,
        )
        return self.add(CommitSucceeded(attempt_id=attempt_id, receipt=receipt, replayed=replayed))

    def commit_failed(self, attempt_id: str, kind: Literal["timeout", "error"]) -> Event:
        return self.add(CommitFailed(attempt_id=attempt_id, failure_kind=kind, reason="tool"))


@dataclass
class Usual:
    """The usual run up to an explicit confirmation of proposal p1, with the ids tests cite."""

    log: Log
    intent: Event
    lookup_ok: Event
    proposal: Event
    readback: Event
    confirmation: Event

    def commit_request(self, **changes: object) -> GateRequest:
        fields: dict[str, object] = {
            "operation": Operation.COMMIT,
            "action": Action.BOOK,
            "revision": 1,
            "args": TUESDAY,
            "proposal_id": "p1",
            "confirmation_event_id": self.confirmation.id,
        }
        fields.update(changes)
        return GateRequest.model_validate(fields)

    def key(self) -> str:
        return idempotency_key(run_id=RUN_ID, proposal_id="p1", args_hash=digest(TUESDAY))


def usual(*, confirm: bool = True) -> Usual:
    log = Log()
    log.start()
    intent = log.revise(TUESDAY)
    log.lookup_started("lk-1")
    lookup_ok = log.lookup_succeeded("lk-1", [TUESDAY, FRIDAY])
    proposal = log.propose("p1", TUESDAY, grounded_on=lookup_ok.id)
    readback = log.readback("p1")
    confirmation = log.say(UnderstandingKind.CONFIRM if confirm else UnderstandingKind.POSITIVE)
    return Usual(log, intent, lookup_ok, proposal, readback, confirmation)


def lookup(revision: int) -> GateRequest:
    return GateRequest(operation=Operation.LOOKUP, action=Action.BOOK, revision=revision)


def propose(revision: int, args: Args, lookup_event_id: str | None) -> GateRequest:
    return GateRequest(
        operation=Operation.PROPOSE,
        action=Action.BOOK,
        revision=revision,
        args=args,
        lookup_event_id=lookup_event_id,
    )


def executed(run: Usual) -> None:
    """Confirm p1, start its commit and record its receipt."""
    _, authorized = run.log.ask(run.commit_request())
    run.log.commit_started(authorized, "cm-1")
    run.log.commit_succeeded("cm-1", run.key())


# Identity


def test_the_gate_names_its_version() -> None:
    assert GATE_VERSION == "gate-1"


def test_an_idempotency_key_is_a_stable_sha256_of_run_proposal_and_args() -> None:
    key = idempotency_key(run_id="r", proposal_id="p", args_hash="h")
    assert key == idempotency_key(run_id="r", proposal_id="p", args_hash="h")
    assert len(key) == 64 and int(key, 16) >= 0
    assert key != idempotency_key(run_id="r2", proposal_id="p", args_hash="h")
    assert key != idempotency_key(run_id="r", proposal_id="p2", args_hash="h")
    assert key != idempotency_key(run_id="r", proposal_id="p", args_hash="h2")


# Lookups


def test_it_blocks_a_lookup_before_the_caller_has_asked_for_anything() -> None:
    log = Log()
    log.start()
    decision = log.gate.decide(lookup(1))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "no_intent")


def test_it_allows_the_first_read_of_the_current_revision_without_confirmation() -> None:
    log = Log()
    log.start()
    intent = log.revise(TUESDAY)
    decision = log.gate.decide(lookup(1))
    assert (decision.outcome, decision.reason_kind) == (Outcome.ALLOW, "read")
    assert decision.rests_on == [intent.id]
    assert decision.idempotency_key is None


def test_it_blocks_a_lookup_for_a_stale_revision() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    newer = log.revise(FRIDAY)
    decision = log.gate.decide(lookup(1))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "stale_revision")
    assert decision.rests_on == [newer.id]


def test_it_allows_one_retry_after_a_failed_read() -> None:
    log = Log()
    log.start()
    intent = log.revise(TUESDAY)
    log.lookup_started("lk-1")
    failed = log.lookup_failed("lk-1", "error")
    decision = log.gate.decide(lookup(1))
    assert (decision.outcome, decision.reason_kind) == (Outcome.ALLOW, "retry")
    assert decision.rests_on == [intent.id, failed.id]


def test_it_blocks_a_second_read_while_the_first_is_in_flight() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    started = log.lookup_started("lk-1")
    decision = log.gate.decide(lookup(1))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "lookup_in_flight")
    assert decision.rests_on == [started.id]


def test_it_blocks_a_second_read_once_the_first_has_answered() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.lookup_started("lk-1")
    answered = log.lookup_succeeded("lk-1", [TUESDAY])
    decision = log.gate.decide(lookup(1))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "lookup_already_answered")
    assert decision.rests_on == [answered.id]


def test_it_allows_at_most_one_retry_of_a_read() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.lookup_started("lk-1")
    first = log.lookup_failed("lk-1")
    log.lookup_started("lk-2")
    second = log.lookup_failed("lk-2")
    decision = log.gate.decide(lookup(1))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "retry_limit")
    assert "at most one retry of a read" in decision.reason
    assert decision.rests_on == [first.id, second.id]


def test_a_new_revision_gets_its_own_read() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.lookup_started("lk-1")
    log.lookup_failed("lk-1")
    log.lookup_started("lk-2")
    log.lookup_failed("lk-2")
    newer = log.revise(FRIDAY)
    decision = log.gate.decide(lookup(2))
    assert (decision.outcome, decision.reason_kind) == (Outcome.ALLOW, "read")
    assert decision.rests_on == [newer.id]


def test_a_rejected_late_result_makes_an_in_flight_read_a_failure() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.lookup_started("lk-1")
    rejected = log.add(LateResultRejected(attempt_id="lk-1", reason="after its timeout"))
    decision = log.gate.decide(lookup(1))
    assert (decision.outcome, decision.reason_kind) == (Outcome.ALLOW, "retry")
    assert rejected.id in decision.rests_on


# Proposals


def test_it_allows_a_proposal_grounded_in_an_option_the_read_returned() -> None:
    run = usual()
    decision = run.log.gate.decide(propose(1, FRIDAY, run.lookup_ok.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.ALLOW, "grounded")
    assert decision.rests_on == [run.intent.id, run.lookup_ok.id]


def test_it_blocks_a_proposal_before_the_caller_has_asked_for_anything() -> None:
    log = Log()
    log.start()
    decision = log.gate.decide(propose(1, TUESDAY, None))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "no_intent")


def test_it_blocks_a_proposal_for_a_stale_revision() -> None:
    run = usual()
    newer = run.log.revise(FRIDAY)
    decision = run.log.gate.decide(propose(1, TUESDAY, run.lookup_ok.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "stale_revision")
    assert decision.rests_on == [newer.id]


def test_it_blocks_a_proposal_that_names_no_read() -> None:
    run = usual()
    decision = run.log.gate.decide(propose(1, TUESDAY, None))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "ungrounded")


def test_it_blocks_a_proposal_that_names_an_event_other_than_a_successful_read() -> None:
    run = usual()
    decision = run.log.gate.decide(propose(1, TUESDAY, run.intent.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "ungrounded")


def test_it_blocks_a_proposal_grounded_on_a_read_of_an_older_revision() -> None:
    run = usual()
    run.log.revise(TUESDAY)
    decision = run.log.gate.decide(propose(2, TUESDAY, run.lookup_ok.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "ungrounded")


def test_it_never_grounds_a_proposal_on_a_result_that_arrived_after_its_timeout() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.lookup_started("lk-1")
    log.lookup_failed("lk-1", "timeout")
    late = log.lookup_succeeded("lk-1", [TUESDAY])
    decision = log.gate.decide(propose(1, TUESDAY, late.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "ungrounded")
    assert log.gate.decide(lookup(1)).reason_kind == "retry"


def test_it_stops_grounding_on_a_read_later_rejected_as_late() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.lookup_started("lk-1")
    answered = log.lookup_succeeded("lk-1", [TUESDAY])
    log.add(LateResultRejected(attempt_id="lk-1", reason="after its timeout"))
    decision = log.gate.decide(propose(1, TUESDAY, answered.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "ungrounded")


def test_it_blocks_a_proposal_whose_args_match_no_option() -> None:
    run = usual()
    invented: Args = {"day": "sunday", "time": "03:00"}
    decision = run.log.gate.decide(propose(1, invented, run.lookup_ok.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "ungrounded")
    assert decision.rests_on == [run.intent.id, run.lookup_ok.id]


def test_it_blocks_a_proposal_for_another_action_than_the_read() -> None:
    run = usual()
    request = propose(1, TUESDAY, run.lookup_ok.id).model_copy(update={"action": Action.REFUND})
    decision = run.log.gate.decide(request)
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "ungrounded")


@pytest.mark.parametrize(
    ("amount", "outcome"),
    [(40, Outcome.ALLOW), (50, Outcome.ALLOW), (51, Outcome.BLOCK), ("40", Outcome.BLOCK)],
)
def test_a_max_bound_in_an_option_caps_the_matching_argument(
    amount: int | str, outcome: Outcome
) -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.lookup_started("lk-1")
    answered = log.lookup_succeeded("lk-1", [{"order": "4512", "max_amount": 50}])
    decision = log.gate.decide(propose(1, {"order": "4512", "amount": amount}, answered.id))
    assert decision.outcome is outcome


def test_a_max_bound_needs_the_bounded_argument() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.lookup_started("lk-1")
    answered = log.lookup_succeeded("lk-1", [{"order": "4512", "max_amount": 50}])
    decision = log.gate.decide(propose(1, {"order": "4512"}, answered.id))
    assert decision.reason_kind == "ungrounded"


# Commits: the allowed path


def test_it_allows_an_explicit_later_confirmation_of_the_current_proposal() -> None:
    run = usual()
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.ALLOW, "confirmed")
    assert decision.rests_on == [run.intent.id, run.proposal.id, run.confirmation.id]
    assert decision.idempotency_key == run.key()


def test_deciding_does_not_change_the_state() -> None:
    run = usual()
    first = run.log.gate.decide(run.commit_request())
    assert run.log.gate.decide(run.commit_request()) == first
    assert run.log.gate.pending_proposal() is not None


def test_a_state_folded_at_once_decides_like_one_folded_event_by_event() -> None:
    run = usual()
    folded = GateState.from_events(run.log.events)
    assert folded.decide(run.commit_request()) == run.log.gate.decide(run.commit_request())
    assert folded.current_revision == 1
    assert folded.pending_proposal() == run.log.gate.pending_proposal()


# Commits: replays


def test_it_blocks_a_commit_of_an_unknown_proposal() -> None:
    run = usual()
    decision = run.log.gate.decide(run.commit_request(proposal_id="p9"))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "no_proposal")
    assert decision.idempotency_key is None


def test_it_replays_a_repeated_confirmation_of_an_executed_proposal() -> None:
    run = usual()
    executed(run)
    receipt_event = run.log.events[-1]
    again = run.log.say(UnderstandingKind.CONFIRM)
    decision = run.log.gate.decide(run.commit_request(confirmation_event_id=again.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.REPLAY, "already_executed")
    assert decision.rests_on == [receipt_event.id, run.confirmation.id]
    assert decision.idempotency_key == run.key()


def test_it_replays_an_executed_proposal_even_after_a_correction() -> None:
    run = usual()
    executed(run)
    run.log.revise(FRIDAY)
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.REPLAY, "already_executed")


def test_it_replays_a_confirmation_that_races_an_authorized_commit_not_yet_started() -> None:
    run = usual()
    _, authorized = run.log.ask(run.commit_request())
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.REPLAY, "in_flight")
    assert decision.rests_on == [authorized.id, run.confirmation.id]


def test_it_replays_a_concurrent_confirmation_while_the_commit_is_in_flight() -> None:
    run = usual()
    _, allowed = run.log.ask(run.commit_request())
    started = run.log.commit_started(allowed, "cm-1")
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.REPLAY, "in_flight")
    assert decision.rests_on == [started.id, run.confirmation.id]
    assert decision.idempotency_key == run.key()


def test_a_timed_out_commit_is_replayed_never_executed_afresh() -> None:
    run = usual()
    _, allowed = run.log.ask(run.commit_request())
    run.log.commit_started(allowed, "cm-1")
    failed = run.log.commit_failed("cm-1", "timeout")
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.REPLAY, "uncertain_outcome")
    assert decision.rests_on == [failed.id, run.confirmation.id]
    assert decision.idempotency_key == run.key()


def test_a_replay_after_a_timeout_that_returns_the_original_receipt_records_it() -> None:
    run = usual()
    _, allowed = run.log.ask(run.commit_request())
    run.log.commit_started(allowed, "cm-1")
    run.log.commit_failed("cm-1", "timeout")
    _, replay = run.log.ask(run.commit_request())
    run.log.commit_started(replay, "cm-2")
    receipt_event = run.log.commit_succeeded("cm-2", run.key(), replayed=True)
    assert run.log.gate.receipt_for(run.key()) is not None
    decision = run.log.gate.decide(run.commit_request())
    assert decision.reason_kind == "already_executed"
    assert decision.rests_on[0] == receipt_event.id


def test_it_blocks_a_commit_whose_execution_failed_for_certain() -> None:
    run = usual()
    _, allowed = run.log.ask(run.commit_request())
    run.log.commit_started(allowed, "cm-1")
    failed = run.log.commit_failed("cm-1", "error")
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "commit_failed")
    assert decision.rests_on == [failed.id]


def test_a_replayed_receipt_does_not_replace_the_original() -> None:
    run = usual()
    executed(run)
    original = run.log.gate.receipt_for(run.key())
    _, replay = run.log.ask(run.commit_request())
    run.log.commit_started(replay, "cm-2")
    run.log.add(
        CommitSucceeded(
            attempt_id="cm-2",
            receipt=Receipt(
                receipt_id="rc-other",
                execution_id="ex-other",
                idempotency_key=run.key(),
                adapter="appointments",
                action=Action.BOOK,
                args=TUESDAY,
            ),
            replayed=True,
        )
    )
    assert run.log.gate.receipt_for(run.key()) == original


# Commits: authority


def test_it_blocks_a_confirmation_of_a_proposal_superseded_by_a_correction() -> None:
    run = usual()
    run.log.revise(FRIDAY)
    expired = run.log.events[-1]
    assert isinstance(expired.payload, ProposalExpired)
    decision = run.log.gate.decide(run.commit_request())
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "proposal_expired")
    assert decision.rests_on == [expired.id]


def test_it_blocks_a_confirmation_of_a_proposal_whose_readback_was_interrupted() -> None:
    run = usual(confirm=False)
    run.log.interrupt(run.readback)
    expired = run.log.events[-1]
    confirmation = run.log.say(UnderstandingKind.CONFIRM)
    decision = run.log.gate.decide(run.commit_request(confirmation_event_id=confirmation.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "proposal_expired")
    assert decision.rests_on == [expired.id]


def test_it_blocks_a_confirmation_of_a_stale_revision() -> None:
    run = usual()
    # Without the expiry reaction recorded, the revision check alone must still hold.
    newer = run.log.revise(FRIDAY, react=False)
    decision = run.log.gate.decide(run.commit_request(revision=2))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "stale_revision")
    assert decision.rests_on == [newer.id]


def test_it_blocks_a_commit_request_that_names_a_stale_revision() -> None:
    run = usual()
    log = run.log
    newer = log.revise(FRIDAY)
    log.lookup_started("lk-2")
    answered = log.lookup_succeeded("lk-2", [FRIDAY])
    log.propose("p2", FRIDAY, grounded_on=answered.id)
    confirmation = log.say(UnderstandingKind.CONFIRM)
    request = run.commit_request(
        proposal_id="p2", args=FRIDAY, revision=1, confirmation_event_id=confirmation.id
    )
    decision = log.gate.decide(request)
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "stale_revision")
    assert decision.rests_on == [newer.id]


@pytest.mark.parametrize(
    "changes",
    [{"args": FRIDAY}, {"args": {**TUESDAY, "party": 2}}, {"action": Action.REFUND}],
    ids=["other-args", "extra-arg", "other-action"],
)
def test_it_blocks_a_commit_that_differs_from_the_proposal(changes: dict[str, object]) -> None:
    run = usual()
    decision = run.log.gate.decide(run.commit_request(**changes))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "args_changed")
    assert decision.rests_on == [run.proposal.id]


def test_changed_args_for_an_executed_proposal_are_an_error_not_a_silent_replay() -> None:
    run = usual()
    executed(run)
    decision = run.log.gate.decide(run.commit_request(args=FRIDAY))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "args_changed")


def test_it_blocks_a_proposal_whose_hash_is_not_of_its_args() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.add(
        ProposalMade(
            proposal_id="p1",
            revision=1,
            action=Action.BOOK,
            args=TUESDAY,
            args_hash=digest(FRIDAY),
        )
    )
    confirmation = log.say(UnderstandingKind.CONFIRM)
    request = GateRequest(
        operation=Operation.COMMIT,
        action=Action.BOOK,
        revision=1,
        args=TUESDAY,
        proposal_id="p1",
        confirmation_event_id=confirmation.id,
    )
    assert log.gate.decide(request).reason_kind == "args_changed"


def test_it_blocks_a_commit_without_a_confirmation() -> None:
    run = usual()
    decision = run.log.gate.decide(run.commit_request(confirmation_event_id=None))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "no_confirmation")
    assert decision.rests_on == [run.proposal.id]


def test_it_blocks_a_commit_whose_confirmation_is_not_a_caller_understanding() -> None:
    run = usual()
    decision = run.log.gate.decide(run.commit_request(confirmation_event_id=run.readback.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "no_confirmation")


@pytest.mark.parametrize(
    "kind", [UnderstandingKind.POSITIVE, UnderstandingKind.REQUEST, UnderstandingKind.UNCLEAR]
)
def test_talk_that_merely_sounds_positive_is_not_a_confirmation(kind: UnderstandingKind) -> None:
    run = usual()
    talk = run.log.say(kind, text="great, sounds good")
    decision = run.log.gate.decide(run.commit_request(confirmation_event_id=talk.id))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "not_explicit")
    assert decision.rests_on == [talk.id]


def test_it_blocks_a_confirmation_given_before_the_proposal() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    early = log.say(UnderstandingKind.CONFIRM)
    log.lookup_started("lk-1")
    answered = log.lookup_succeeded("lk-1", [TUESDAY])
    proposal = log.propose("p1", TUESDAY, grounded_on=answered.id)
    request = GateRequest(
        operation=Operation.COMMIT,
        action=Action.BOOK,
        revision=1,
        args=TUESDAY,
        proposal_id="p1",
        confirmation_event_id=early.id,
    )
    decision = log.gate.decide(request)
    assert (decision.outcome, decision.reason_kind) == (
        Outcome.BLOCK,
        "confirmation_before_proposal",
    )
    assert decision.rests_on == [proposal.id, early.id]


def test_it_blocks_a_confirmation_already_used_for_another_proposal() -> None:
    log = Log()
    log.start()
    log.revise(TUESDAY)
    log.lookup_started("lk-1")
    answered = log.lookup_succeeded("lk-1", [TUESDAY, FRIDAY])
    log.propose("p1", TUESDAY, grounded_on=answered.id)
    log.propose("p2", FRIDAY, grounded_on=answered.id)
    confirmation = log.say(UnderstandingKind.CONFIRM)
    first = GateRequest(
        operation=Operation.COMMIT,
        action=Action.BOOK,
        revision=1,
        args=TUESDAY,
        proposal_id="p1",
        confirmation_event_id=confirmation.id,
    )
    _, authorized = log.ask(first)
    decision = log.gate.decide(first.model_copy(update={"proposal_id": "p2", "args": FRIDAY}))
    assert (decision.outcome, decision.reason_kind) == (Outcome.BLOCK, "confirmation_reused")
    assert decision.rests_on == [confirmation.id, authorized.id]


def test_a_blocked_commit_does_not_bind_its_confirmation() -> None:
    run = usual()
    run.log.ask(run.commit_request(args=FRIDAY))
    assert run.log.gate.decide(run.commit_request()).reason_kind == "confirmed"


# Reactions: expiry


def test_a_correction_expires_every_pending_proposal_of_older_revisions() -> None:
    run = usual()
    run.log.propose("p2", FRIDAY, grounded_on=run.lookup_ok.id)
    revised = run.log.revise(FRIDAY, react=False)
    reactions = run.log.gate.reactions(revised)
    assert reactions == [
        ProposalExpired(proposal_id="p1", reason_kind="superseded", cause_event_id=revised.id),
        ProposalExpired(proposal_id="p2", reason_kind="superseded", cause_event_id=revised.id),
    ]
    for reaction in reactions:
        run.log.add(reaction)
    assert run.log.gate.reactions(revised) == []
    assert run.log.gate.pending_proposal() is None


def test_a_correction_does_not_expire_a_proposal_whose_commit_is_in_flight() -> None:
    run = usual()
    _, allowed = run.log.ask(run.commit_request())
    run.log.commit_started(allowed, "cm-1")
    revised = run.log.revise(FRIDAY, react=False)
    assert run.log.gate.reactions(revised) == []
    assert run.log.gate.decide(run.commit_request()).reason_kind == "in_flight"


def test_a_correction_does_not_expire_an_executed_proposal() -> None:
    run = usual()
    executed(run)
    revised = run.log.revise(FRIDAY, react=False)
    assert run.log.gate.reactions(revised) == []


def test_an_interrupted_readback_expires_its_pending_proposal() -> None:
    run = usual(confirm=False)
    interrupted = run.log.interrupt(run.readback)
    assert run.log.events[-1].payload == ProposalExpired(
        proposal_id="p1", reason_kind="interrupted", cause_event_id=interrupted.id
    )
    assert run.log.gate.pending_proposal() is None


def test_an_interruption_does_not_expire_a_commit_already_in_flight() -> None:
    run = usual()
    _, allowed = run.log.ask(run.commit_request())
    run.log.commit_started(allowed, "cm-1")
    interrupted = run.log.interrupt(run.readback)
    assert run.log.gate.reactions(interrupted) == []
    run.log.commit_succeeded("cm-1", run.key())
    assert run.log.gate.receipt_for(run.key()) is not None
    assert run.log.gate.decide(run.commit_request()).outcome is Outcome.REPLAY


def test_an_interruption_of_an_executed_proposal_expires_nothing() -> None:
    run = usual()
    executed(run)
    interrupted = run.log.interrupt(run.readback)
    assert run.log.gate.reactions(interrupted) == []


def test_an_interruption_of_speech_other_than_a_readback_expires_nothing() -> None:
    run = usual(confirm=False)
    greeting = run.log.add(AgentUtterance(text="Hello", purpose="greeting", duration_ms=900))
    interrupted = run.log.interrupt(greeting)
    assert run.log.gate.reactions(interrupted) == []
    assert run.log.gate.pending_proposal() is not None


def test_an_expiry_is_recorded_once_even_if_repeated() -> None:
    run = usual()
    run.log.interrupt(run.readback)
    first_expiry = run.log.events[-1]
    run.log.add(ProposalExpired(proposal_id="p1", reason_kind="superseded", cause_event_id="x"))
    assert run.log.gate.decide(run.commit_request()).rests_on == [first_expiry.id]


def test_events_the_gate_does_not_use_cause_no_reactions() -> None:
    run = usual()
    assert all(run.log.gate.reactions(event) == [] for event in run.log.events)


# Queries


def test_the_current_revision_follows_the_latest_intent() -> None:
    log = Log()
    assert log.gate.current_revision is None
    log.revise(TUESDAY)
    log.revise(FRIDAY)
    assert log.gate.current_revision == 2


def test_the_pending_proposal_is_the_latest_live_proposal_of_the_current_revision() -> None:
    run = usual()
    assert run.log.gate.pending_proposal() == run.proposal.payload
    later = run.log.propose("p2", FRIDAY, grounded_on=run.lookup_ok.id)
    assert run.log.gate.pending_proposal() == later.payload
    confirmation = run.log.say(UnderstandingKind.CONFIRM)
    decision, _ = run.log.ask(
        run.commit_request(proposal_id="p2", args=FRIDAY, confirmation_event_id=confirmation.id)
    )
    assert decision.outcome is Outcome.ALLOW
    assert run.log.gate.pending_proposal() == run.proposal.payload


def test_a_proposal_stops_being_pending_once_its_commit_is_authorized() -> None:
    run = usual()
    run.log.ask(run.commit_request())
    assert run.log.gate.pending_proposal() is None


def test_receipt_for_returns_the_recorded_receipt_for_a_key() -> None:
    run = usual()
    assert run.log.gate.receipt_for(run.key()) is None
    executed(run)
    receipt = run.log.gate.receipt_for(run.key())
    assert receipt is not None and receipt.receipt_id == "rc-1"


def test_a_known_key_with_other_args_is_an_error() -> None:
    run = usual()
    executed(run)
    assert run.log.gate.check_key(run.key(), digest(TUESDAY)) is None
    reason = run.log.gate.check_key(run.key(), digest(FRIDAY))
    assert reason is not None and "different arguments" in reason
    assert run.log.gate.check_key("unknown-key", digest(FRIDAY)) is None
