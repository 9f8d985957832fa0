"""Amounts and British times as callers say them: one reading, the same for agent and grader."""

from __future__ import annotations

import pytest

from lab.events.types import Action, Confirmation, ProposalMade
from lab.grading.lexicon import read_values
from lab.language.amounts import read_amount, read_dollars_and_cents
from lab.language.numbers import tokenize
from lab.language.understanding import Context, understand
from lab.scripted.setup import calendar_week
from tests.language.harness import Call

TWELVE_FIFTY = [
    "twelve dollars fifty",
    "twelve fifty",
    "12.50",
    "twelve dollars and fifty cents",
    "$12.50",
    "12 dollars 50",
    "twelve bucks fifty",
]
ASKED_FOR_AMOUNT = Context(action=Action.REFUND, expecting=("amount_cents",), week=calendar_week())


@pytest.mark.parametrize("said", TWELVE_FIFTY)
def test_every_way_of_saying_twelve_fifty_is_1250_cents_in_a_refund(said: str) -> None:
    request = understand(f"I want a refund on order 4512, {said}.")
    assert request.args == {"order_number": "4512", "amount_cents": 1250}, said
    assert understand(said, ASKED_FOR_AMOUNT).args == {"amount_cents": 1250}, said


@pytest.mark.parametrize(
    "said", ["twelve dollars fifty", "twelve dollars and fifty cents", "$12.50", "12.50"]
)
def test_the_grader_reads_the_same_amount_in_an_agent_sentence(said: str) -> None:
    assert [reading.value for reading in read_values(f"That was {said}.").amounts] == [1250]


def test_the_refund_readback_says_the_amount_the_caller_said_and_a_yes_refunds_it() -> None:
    call = Call()
    call.say("I want a refund on order 4512, twelve dollars fifty.")
    proposal: ProposalMade = call.of_type(ProposalMade)[-1]
    assert proposal.args["amount_cents"] == 1250
    said = call.say("Go on then.")
    assert any("$12.50" in utterance.text and "Done" in utterance.text for utterance in said)


@pytest.mark.parametrize(
    "said", ["one forty-nine", "twelve fifty dollars", "twelve dollars, fifty"]
)
def test_an_amount_that_reads_more_than_one_way_is_asked_again_never_guessed(said: str) -> None:
    request = understand(f"Refund order 4512, {said}.")
    assert request.args == {"order_number": "4512"}
    assert "amount_cents" in request.ambiguous
    call = Call()
    (asked,) = call.say(f"Refund order 4512, {said}.")
    assert "dollars and cents" in asked.text and not call.of_type(ProposalMade)


def test_the_reader_gives_every_meaning_of_a_price_said_as_two_numbers() -> None:
    def meanings(text: str) -> tuple[int, ...] | None:
        reading = read_dollars_and_cents(tokenize(text), 0)
        return None if reading is None else reading.value

    assert meanings("twelve fifty") == (1250,)
    assert meanings("eighty-five fifty") == (8550,)
    assert meanings("one forty-nine") == (149, 14900)
    assert meanings("one twenty-nine fifty") == (12950,)
    assert meanings("one twenty-nine, fifty") == (129, 12900)
    assert meanings("twelve fifty dollars") == (1250, 125000)
    assert meanings("twelve") is None and meanings("twelve five") is None
    assert meanings("twelve fifty cents") is None


def test_cents_after_the_dollars_count_only_when_said_in_one_breath() -> None:
    def cents(text: str) -> int | None:
        reading = read_amount(tokenize(text), 0)
        return None if reading is None else reading.value

    assert cents("twelve dollars fifty") == 1250
    assert cents("twelve dollars fifty five") == 1255
    assert cents("twelve dollars, fifty") == 1200
    assert cents("twelve dollars 5 times") == 1200


def test_a_digit_run_before_an_amount_is_never_split_into_a_price() -> None:
    request = understand("refund order four five one two twelve dollars fifty")
    assert request.args == {"order_number": "4512", "amount_cents": 1250}


@pytest.mark.parametrize(
    ("said", "time"),
    [
        ("Can I come in Tuesday at half two?", "14:30"),
        ("Thursday, half ten please", "10:30"),
        ("Could I do Monday, half eleven?", "11:30"),
        ("Friday half 2", "14:30"),
    ],
)
def test_british_half_hours_are_half_past_within_business_hours(said: str, time: str) -> None:
    assert understand(said, Context(week=calendar_week())).args["time"] == time


def test_half_before_a_count_is_no_time() -> None:
    assert "time" not in understand("Book Monday, half one hour").args
    assert [r.value.minute for r in read_values("We open at half eight.", timely=True).times] == [
        30
    ]


BOOKING = Context(action=Action.BOOK, proposal_action=Action.BOOK, week=calendar_week())


@pytest.mark.parametrize(
    "said",
    [
        "That's grand, book me in.",
        "Pop me down for that.",
        "Go on then.",
        "Sounds good, lock it in.",
        "Yeah go on, book it",
        "Get me booked in.",
    ],
)
def test_casual_confirmations_confirm(said: str) -> None:
    assert understand(said, BOOKING).confirmation is Confirmation.CONFIRM


@pytest.mark.parametrize(
    "said",
    [
        "That's grand.",
        "Go on.",
        "Yes, go on.",
        "Don't pop me down yet.",
        "Can you pop me down for that?",
        "Go on then, what's the price?",
        "Sounds good, but lock it in later.",
    ],
)
def test_what_only_sounds_agreeable_never_confirms(said: str) -> None:
    assert understand(said, BOOKING).confirmation is not Confirmation.CONFIRM


def test_a_question_back_about_the_readback_is_asked_again_whatever_it_names() -> None:
    asked = understand("Wait, is that the morning or the afternoon?", BOOKING)
    assert asked.confirmation is Confirmation.UNCLEAR and asked.args == {}
    assert understand("Is that the afternoon?", Context(week=calendar_week())).args


def test_digits_the_recognizer_wrote_end_where_number_words_begin() -> None:
    request = understand("refund order 3307 nineteen ninety nine")
    assert request.args == {"order_number": "3307", "amount_cents": 1999}


def test_a_british_half_hour_said_loosely_is_an_approximate_time() -> None:
    request = understand("Friday, half three-ish.", Context(week=calendar_week()))
    assert request.args == {"day": "friday", "around": "15:30", "part_of_day": "afternoon"}
