"""The grader reads amounts and times with the caller's reader: one reading for both sides."""

from __future__ import annotations

import pytest

from lab.grading.lexicon import Clock, read_values
from lab.grading.prices import read_prices
from lab.language.amounts import read_amount, read_dollars_and_cents
from lab.language.numbers import tokenize
from lab.language.times import read_relative_time


@pytest.mark.parametrize(
    ("sentence", "cents"),
    [
        ("A brake service is twelve dollars fifty.", 1250),
        ("That comes to twelve dollars and fifty cents.", 1250),
        ("It's $12.50 for that.", 1250),
        ("The fit is 45 dollars.", 4500),
        ("A hundred and forty-nine bucks, all in.", 14900),
    ],
)
def test_amounts_in_an_agent_sentence_are_what_the_callers_reader_reads(
    sentence: str, cents: int
) -> None:
    (amount,) = read_values(sentence).amounts
    direct = read_amount(tokenize(sentence), amount.first)
    assert amount.value == cents and direct is not None and direct.value == cents


@pytest.mark.parametrize(
    ("sentence", "cents"),
    [
        ("It's one forty-nine.", 14900),
        ("The premium runs two forty-nine.", 24900),
        ("The shampoo is eighty-five fifty.", 8550),
        ("It costs one twenty-nine fifty.", 12950),
        ("That is twelve fifty.", 1250),
    ],
)
def test_the_grader_prices_a_spoken_amount_as_the_last_meaning_the_shared_reader_gives(
    sentence: str, cents: int
) -> None:
    values = read_values(sentence)
    read_prices(values, priced=True)
    (amount,) = values.amounts
    shared = read_dollars_and_cents(tokenize(sentence), amount.first)
    assert amount.value == cents and shared is not None and shared.value[-1] == cents


def test_the_grader_reads_no_price_where_the_number_counts_something_else() -> None:
    values = read_values("We have twenty years in business and forty-five minutes a visit.")
    read_prices(values, priced=True)
    assert values.amounts == []


@pytest.mark.parametrize(
    ("sentence", "clock"),
    [
        ("We open at half past eight.", Clock(8, 30, None)),
        ("We close at a quarter to six.", Clock(5, 45, None)),
        ("We close at half five in the afternoon.", Clock(5, 30, "pm")),
        ("Doors open at half nine.", Clock(9, 30, None)),
    ],
)
def test_times_told_against_the_hour_read_as_the_caller_side_reads_them(
    sentence: str, clock: Clock
) -> None:
    (time,) = read_values(sentence, timely=True).times
    assert time.value == clock
    spoken = tokenize(sentence)
    told = read_relative_time(spoken, time.first, len(spoken.tokens))
    assert told is not None and (told.value.hour, told.value.minute) == (clock.hour, clock.minute)


def test_half_before_a_count_is_a_duration_or_nothing_never_a_clock() -> None:
    assert read_values("It takes half an hour.", timely=True).times == []
