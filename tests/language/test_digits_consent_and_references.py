"""Issue 32 (callers): times said as digit pairs, consent said through a negative, and
references back to the request the call is making."""

from __future__ import annotations

import pytest

from lab.events.types import Action, Confirmation, UnderstandingKind
from lab.language.understanding import Context, understand
from lab.scripted.setup import calendar_week

WEEK = calendar_week()
READBACK = Context(action=Action.BOOK, proposal_action=Action.BOOK, week=WEEK)


@pytest.mark.parametrize(
    ("text", "context", "time"),
    [
        ("book the 2 30 on wednesday", Context(week=WEEK), "14:30"),
        ("thursday 10 15", Context(week=WEEK), "10:15"),
        ("can we do 9 15 instead", READBACK, "09:15"),
    ],
)
def test_a_time_said_as_two_digit_groups_is_a_time(text, context, time):
    assert understand(text, context).args["time"] == time


def test_two_digit_groups_alone_are_still_no_time():
    assert "time" not in understand("9 30", Context(week=WEEK)).args


@pytest.mark.parametrize(
    "text",
    [
        "no, that's not wrong, go ahead",
        "no objections, put it through",
        "nothing wrong with that, book it",
        "no reason not to, go for it",
        "can't argue with that, go ahead",
    ],
)
def test_consent_said_through_a_negative_confirms_beside_an_explicit_go_ahead(text):
    assert understand(text, READBACK).confirmation is Confirmation.CONFIRM


@pytest.mark.parametrize(
    "text",
    ["no", "No.", "no, that's wrong", "no, don't book it", "I don't see why", "no, not yet"],
)
def test_a_plain_no_never_confirms(text):
    assert understand(text, READBACK).confirmation is Confirmation.NOT_CONFIRM


@pytest.mark.parametrize("text", ["I don't see why not, sure", "no objections", "that's not wrong"])
def test_consent_without_a_go_ahead_is_asked_again(text):
    assert understand(text, READBACK).confirmation is Confirmation.UNCLEAR


def test_the_day_after_that_moves_the_current_request_a_day():
    context = Context(
        action=Action.BOOK, proposal_action=Action.BOOK, week=WEEK, current={"day": "tuesday"}
    )
    meant = understand("I meant the day after that", context)
    assert (meant.kind, meant.args) == (UnderstandingKind.CORRECTION, {"day": "wednesday"})
    assert meant.confirmation is Confirmation.NOT_CONFIRM


def test_half_of_it_halves_the_current_amount_and_nothing_is_guessed_without_one():
    refund = Context(action=Action.REFUND, week=WEEK, current={"amount_cents": 4000})
    assert understand("actually just half of it", refund).args == {"amount_cents": 2000}
    assert understand("actually just half of it", Context(action=Action.REFUND)).args == {}


def test_a_reference_back_keeps_what_else_the_caller_changes_and_a_named_day_is_no_reference():
    context = Context(
        action=Action.BOOK, proposal_action=Action.BOOK, week=WEEK, current={"day": "tuesday"}
    )
    later = understand("I meant the day after that, in the afternoon", context)
    assert later.args == {"day": "wednesday", "part_of_day": "afternoon"}
    said = "Actually, the day after Wednesday, in the afternoon."
    # Whatever the lab makes of a named day, the current request's day plays no part in it.
    assert understand(said, context).args == understand(said, READBACK).args
