from __future__ import annotations

from datetime import UTC, datetime

from lab.events.chain import EventChain, digest
from lab.events.types import (
    Action,
    Args,
    CallerUnderstood,
    CommitStarted,
    Event,
    EventPayload,
    IntentRevised,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    ProposalExpired,
    ProposalMade,
    UnderstandingKind,
)
from lab.referee.referee import Referee
from lab.scripted.setup import calendar_week

AT = datetime(2025, 3, 9, 10, 0, tzinfo=UTC)
TUESDAY: list[Args] = [
    {"slot_id": "tue-0930", "day": "tuesday", "time": "09:30"},
    {"slot_id": "tue-1100", "day": "tuesday", "time": "11:00"},
]


class Call:
    """A referee fed a hand-written log, one event at a time."""

    def __init__(self, *tools: Action) -> None:
        self.referee = Referee(tools=frozenset(tools or Action), week=calendar_week())
        self.chain = EventChain()
        self.proposals = 0

    def add(self, payload: EventPayload) -> Event:
        event = self.chain.append(payload, at=AT)
        self.referee.observe(event)
        return event

    def caller(self, text: str) -> Event:
        understood = self.referee.understand(text).event("ev-00000")
        event = self.add(understood)
        revision = self.referee.revise(understood)
        if revision is not None:
            self.add(
                IntentRevised(
                    revision=self.referee.revision + 1,
                    action=revision.action,
                    args=revision.args,
                    supersedes=revision.supersedes,
                    understood_event_id=event.id,
                )
            )
        return event

    def looked_up(self, options: list[Args], action: Action = Action.BOOK) -> Event:
        attempt = f"lk-{self.referee.revision}-1"
        self.add(
            LookupStarted(
                attempt_id=attempt,
                attempt=1,
                revision=self.referee.revision,
                action=action,
                query={},
            )
        )
        return self.add(LookupSucceeded(attempt_id=attempt, options=options))

    def propose(self, text: str) -> ProposalMade | None:
        readback = self.referee.readback(text)
        if readback is None or readback.proposal_id is not None:
            return None
        self.proposals += 1
        made = ProposalMade(
            proposal_id=f"p-{self.proposals}",
            revision=readback.revision,
            action=readback.action,
            args=readback.args,
            args_hash=digest(readback.args),
            grounded_on=readback.grounded_on,
        )
        self.add(made)
        return made


def test_a_readback_of_a_looked_up_slot_is_a_proposal_grounded_on_that_lookup():
    call = Call(Action.BOOK)
    call.caller("I'd like Tuesday morning, please.")
    found = call.looked_up(TUESDAY)
    readback = call.referee.readback("I have Tuesday at 11 AM. Shall I book it?")
    assert readback is not None and readback.proposal_id is None
    assert readback.args == TUESDAY[1] and readback.grounded_on == found.id


def test_only_a_looked_up_slot_grounds_a_proposal_and_only_a_fit_for_the_request_is_one():
    call = Call(Action.BOOK)
    call.caller("I'd like Tuesday morning, please.")
    assert call.referee.readback("Let me check Tuesday morning.") is None
    call.looked_up(TUESDAY)
    # A slot the lookup did not return is offered on nothing; one outside the request is no offer.
    invented = call.referee.readback("I have Tuesday at 10:00 AM.")
    assert invented is not None and invented.grounded_on is None
    call.looked_up([*TUESDAY, {"slot_id": "tue-1500", "day": "tuesday", "time": "15:00"}])
    assert call.referee.readback("I have Tuesday at 3 PM. Shall I book it?") is None


def test_a_lookup_of_an_older_revision_grounds_no_readback_after_a_correction():
    call = Call(Action.BOOK)
    call.caller("I'd like Tuesday morning, please.")
    call.looked_up(TUESDAY)
    call.caller("Actually, make that Thursday afternoon.")
    assert call.referee.revision == 2 and call.referee.args["day"] == "thursday"
    assert call.referee.readback("I have Tuesday at 9:30 AM. Shall I book it?") is None


def test_a_repeated_readback_names_the_pending_proposal_and_a_recap_after_the_commit_none():
    call = Call(Action.BOOK)
    call.caller("I'd like Tuesday morning, please.")
    call.looked_up(TUESDAY)
    made = call.propose("I have Tuesday at 9:30 AM. Shall I book it?")
    assert made is not None
    again = call.referee.readback("Just to be sure, Tuesday at 9:30 AM?")
    assert again is not None and again.proposal_id == made.proposal_id
    confirm = call.caller("Yes, book it.")
    basis = call.referee.commit_basis(Action.BOOK, dict(TUESDAY[0]))
    assert basis.proposal == made and basis.confirmation_event_id == confirm.id
    call.add(
        CommitStarted(
            attempt_id="cm-1",
            idempotency_key="k",
            action=Action.BOOK,
            args=made.args,
            args_hash=made.args_hash,
            revision=1,
            proposal_id=made.proposal_id,
            confirmation_event_id=confirm.id,
            authorized_by=None,
        )
    )
    assert call.referee.readback("Booked: Tuesday at 9:30 AM.") is None


def test_an_expired_offer_read_back_again_is_a_new_proposal():
    call = Call(Action.BOOK)
    call.caller("I'd like Tuesday morning, please.")
    call.looked_up(TUESDAY)
    made = call.propose("I have Tuesday at 9:30 AM. Shall I book it?")
    assert made is not None
    call.add(
        ProposalExpired(
            proposal_id=made.proposal_id, reason_kind="interrupted", cause_event_id="ev-00001"
        )
    )
    again = call.referee.readback("Sorry, again: Tuesday at 9:30 AM?")
    assert again is not None and again.proposal_id is None


def test_a_commit_rests_on_the_proposal_with_its_args_and_the_latest_reply_after_it():
    call = Call(Action.BOOK)
    call.caller("I'd like Tuesday morning, please.")
    call.looked_up(TUESDAY)
    first = call.propose("I have Tuesday at 9:30 AM. Shall I book it?")
    assert first is not None
    presence = call.caller("Yes, I'm still here.")
    assert call.referee.commit_basis(Action.BOOK, {"slot_id": "x"}).proposal is None
    basis = call.referee.commit_basis(Action.BOOK, dict(TUESDAY[0]))
    # No explicit confirmation after it: the latest reply, which the gate then refuses.
    assert basis.proposal == first and basis.confirmation_event_id == presence.id
    assert isinstance(presence.payload, CallerUnderstood)
    assert presence.payload.kind is not UnderstandingKind.CONFIRM


def test_a_refund_readback_names_the_amount_the_caller_asked_for_within_the_order():
    call = Call(Action.REFUND)
    call.caller("I want a refund on order number 4512, forty dollars.")
    assert call.referee.args == {"order_number": "4512", "amount_cents": 4000}
    call.looked_up([{"order_number": "4512", "max_amount_cents": 6000}], Action.REFUND)
    assert call.referee.readback("I can refund $25.00 on order 4512.") is None
    readback = call.referee.readback("I can refund $40.00 on order 4512. Shall I go ahead?")
    assert readback is not None
    assert readback.args == {"order_number": "4512", "amount_cents": 4000}
    call.caller("Actually, make that twenty five dollars.")
    assert call.referee.args == {"order_number": "4512", "amount_cents": 2500}


def test_a_request_for_a_tool_the_call_lacks_revises_nothing():
    call = Call(Action.BOOK)
    call.caller("I want a refund on order number 4512, forty dollars.")
    assert call.referee.revision == 0


def test_an_offer_no_lookup_returned_is_an_ungrounded_proposal_once_a_lookup_answered():
    call = Call(Action.BOOK)
    call.caller("I need an appointment on Wednesday afternoon.")
    invented = "I have Wednesday at 2:00 PM. Shall I book it?"
    assert call.referee.readback(invented) is None  # before any answer: "let me check" talk
    call.add(
        LookupStarted(attempt_id="lk-1-1", attempt=1, revision=1, action=Action.BOOK, query={})
    )
    call.add(LookupFailed(attempt_id="lk-1-1", failure_kind="timeout", reason="slow"))
    readback = call.referee.readback(invented)
    assert readback is not None and readback.grounded_on is None
    assert readback.args == {"day": "wednesday", "time": "14:00"}
    assert call.referee.readback("I have nothing for Wednesday at 2:00 PM.") is None
    assert call.referee.readback("Let me try Wednesday at 2 PM once more.") is None
