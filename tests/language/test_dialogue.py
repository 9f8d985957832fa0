from __future__ import annotations

from lab.events.types import (
    Action,
    AgentUtterance,
    CallerUnderstood,
    CommitStarted,
    Confirmation,
    GateDecision,
    GateRequest,
    IntentRevised,
    LookupStarted,
    Operation,
    ProposalMade,
)
from lab.scripted import answers, wording
from tests.language.harness import Call

BOOK_ONLY = frozenset({Action.BOOK})
REFUND_ONLY = frozenset({Action.REFUND})


def texts(said: list[AgentUtterance]) -> list[str]:
    return [utterance.text for utterance in said]


def commits(call: Call) -> list[CommitStarted]:
    return call.of_type(CommitStarted)


def commit_requests(call: Call) -> list[GateRequest]:
    decisions: list[GateDecision] = call.of_type(GateDecision)
    return [d.request for d in decisions if d.request.operation is Operation.COMMIT]


def proposals(call: Call) -> list[ProposalMade]:
    return call.of_type(ProposalMade)


def test_a_yes_that_says_the_caller_is_still_there_books_nothing_and_asks_again() -> None:
    call = Call()
    call.say("I'd like Thursday afternoon.")
    said = call.say("Yes, I'm still here.")
    assert not commit_requests(call)
    assert [(u.purpose, u.proposal_id) for u in said] == [("reconfirm", "p-1")]
    assert said[0].text == "Yes, I'm here. Just to be sure: Thursday at 2:00 PM, shall I book it?"
    call.say("Yes, book it.")
    assert [c.args["slot_id"] for c in commits(call)] == ["thu-1400"]


def test_an_unclear_reply_is_asked_again_with_the_readback_and_recorded_with_its_cue() -> None:
    call = Call()
    call.say("Thursday afternoon please")
    said = call.say("Yeah, I guess.")
    assert texts(said) == ["Just to be sure: Thursday at 2:00 PM, shall I book it?"]
    understood: list[CallerUnderstood] = call.of_type(CallerUnderstood)
    assert (understood[-1].confirmation, understood[-1].cue_kind, understood[-1].cue) == (
        Confirmation.UNCLEAR,
        "hedge",
        "I guess",
    )
    assert not commit_requests(call)


def test_only_an_explicit_confirmation_reaches_the_gate_as_one() -> None:
    call = Call()
    call.say("Monday morning")
    for reply in ["Okay.", "Sure.", "Sounds good.", "Yes, sorry, go on.", "yes I can hear you"]:
        call.say(reply)
    assert not commit_requests(call)
    call.say("Lock it in.")
    locked = next(e for e in call.events if getattr(e.payload, "cue", None) == "Lock it in")
    assert [r.confirmation_event_id for r in commit_requests(call)] == [locked.id]
    assert len(commits(call)) == 1


def test_an_unguarded_agent_takes_a_yes_to_something_else_as_a_go_ahead() -> None:
    call = Call(guarded=False)
    call.say("Monday morning")
    call.say("Yes, I'm still here.")
    assert len(commits(call)) == 1


def test_a_correction_to_after_lunch_books_the_afternoon_not_the_morning() -> None:
    call = Call()
    call.say("Tuesday morning, please.")
    assert proposals(call)[-1].args["time"] == "09:30"
    call.say("Actually, make it after lunch.")
    assert proposals(call)[-1].args["slot_id"] == "tue-1500"
    call.say("Yes, book it.")
    assert [c.args["slot_id"] for c in commits(call)] == ["tue-1500"]


def test_landmarks_pick_the_slot_they_describe() -> None:
    for said, slot in [
        ("first thing Tuesday", "tue-0930"),
        ("Thursday, end of the day", "thu-1530"),
        ("around two on Thursday", "thu-1400"),
        ("Have passed to on Friday.", "fri-1430"),
        ("Wednesday between three and five", "wed-1600"),
        ("tomorrow morning", "mon-0900"),
        ("the 14th, after lunch", "fri-1430"),
    ]:
        call = Call()
        call.say(said)
        assert proposals(call)[-1].args["slot_id"] == slot, said


def test_a_day_outside_the_calendar_week_is_asked_about_not_guessed() -> None:
    call = Call()
    said = call.say("Can I come in on the 21st?")
    revisions: list[IntentRevised] = call.of_type(IntentRevised)
    assert all("day" not in r.args for r in revisions)
    assert not call.of_type(LookupStarted)
    assert "Monday, March 10 to Friday, March 14" in said[-1].text


def test_an_amount_without_a_currency_word_corrects_a_refund() -> None:
    call = Call()
    call.say("I'd like a refund of forty dollars on order 4512.")
    assert proposals(call)[-1].args["amount_cents"] == 4000
    call.say("It was thirty-five, not forty.")
    assert proposals(call)[-1].args == {"order_number": "4512", "amount_cents": 3500}


def test_digit_groups_that_could_be_one_number_or_two_are_asked_about() -> None:
    call = Call()
    said = call.say("Refund order number 4500, 12.")
    revisions: list[IntentRevised] = call.of_type(IntentRevised)
    assert all("order_number" not in r.args for r in revisions)
    assert '"4500, 12"' in said[-1].text
    call.say("4 5 1 2")
    call.say("forty dollars")
    assert proposals(call)[-1].args == {"order_number": "4512", "amount_cents": 4000}


def test_a_refund_request_in_a_booking_call_is_answered_truthfully() -> None:
    call = Call(tools=BOOK_ONLY)
    said = call.say("I want a refund on order 4512, forty dollars.")
    assert texts(said) == ["I can't issue refunds on this call; here I can only book appointments."]
    assert not call.of_type(LookupStarted)


def test_a_booking_request_in_a_refund_call_is_answered_truthfully() -> None:
    call = Call(tools=REFUND_ONLY)
    said = call.say("Book me Tuesday morning.")
    assert texts(said) == ["I can't book appointments on this call; here I can only issue refunds."]


def test_a_confirmation_cut_into_the_readback_is_met_with_the_offer_again() -> None:
    call = Call()
    call.say("Thursday afternoon")
    said = call.say("Yes!", interrupting=True)
    decisions: list[GateDecision] = call.of_type(GateDecision)
    assert decisions[-2].reason_kind == "proposal_expired"
    assert wording.NOTHING_WAITING not in texts(said)
    assert [p.proposal_id for p in proposals(call)] == ["p-1", "p-2"]
    assert said[-1].purpose == "readback"
    call.say("Yes, book it.")
    assert [c.proposal_id for c in commits(call)] == ["p-2"]


def test_the_gate_names_an_expired_proposal_when_a_confirmation_names_none() -> None:
    call = Call()
    call.say("Thursday afternoon")
    call.interrupt(call.events[-1].id)
    decision = call.gate.decide(
        GateRequest(
            operation=Operation.COMMIT,
            action=Action.BOOK,
            revision=1,
            confirmation_event_id=call.events[-1].id,
        )
    )
    assert (decision.reason_kind, decision.outcome) == ("proposal_expired", "block")


def test_anything_out_of_scope_gets_the_honest_line() -> None:
    for text in ["Can you send me an invoice?", "My cat likes fish", "Order me a pizza"]:
        assert texts(Call().say(text)) == [wording.SCOPE], text


def test_questions_about_the_agent_are_answered_and_facts_are_never_invented() -> None:
    assert texts(Call().say("What can you do?")) == [wording.CAPABILITIES]
    assert texts(Call().say("Am I talking to a robot?")) == [wording.IDENTITY]
    assert texts(Call().say("What are your opening hours?")) == [
        "Opening hours of Northgate Cycle Works: Monday to Friday 8:30 AM to 5:30 PM; "
        "Saturday 10:00 AM to 2:00 PM; Sunday closed [KB-1]."
    ]
    assert texts(Call().say("How much is a haircut?")) == [answers.NOT_COVERED]


def test_a_new_day_alone_keeps_the_part_of_the_day_already_given() -> None:
    call = Call()
    call.say("Can I book Tuesday afternoon?")
    call.say("Not Tuesday, Wednesday.")
    assert call.of_type(IntentRevised)[-1].args == {"day": "wednesday", "part_of_day": "afternoon"}
    call.say("Actually, Thursday morning.")
    assert call.of_type(IntentRevised)[-1].args == {"day": "thursday", "part_of_day": "morning"}
