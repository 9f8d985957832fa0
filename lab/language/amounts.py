"""Amounts of money as callers say them and as speech recognition writes them.

Pure: the one reader of amounts, for the caller's understanding and the grader's prices alike.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lab.language.numbers import (
    SCALES,
    TEENS,
    TENS,
    UNITS,
    Reading,
    Spoken,
    Token,
    read_number,
    tokenize,
)

DOLLAR_WORDS = frozenset({"dollar", "dollars", "buck", "bucks", "usd"})
CENT_WORDS = frozenset({"cent", "cents"})
# A number after "twelve dollars" that counts something is no cents ("twelve dollars 5 times").
_COUNTING_WORDS = frozenset({"times", "items", "each", "percent", "minutes", "hours", "days"})
_DECIMAL = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?")


def decimal_cents(literal: str) -> int | None:
    """Cents in a written amount such as "25", "25.5", "25.50" or "1,200.00"."""
    match = _DECIMAL.fullmatch(literal)
    if not match:
        return None
    whole, fraction = match.groups()
    return int(whole.replace(",", "")) * 100 + int((fraction or "0").ljust(2, "0"))


def parse_amount_cents(text: str) -> int | None:
    """The amount in cents that text says as a whole ("$25.50", "forty bucks", "25.00")."""
    spoken = tokenize(text)
    if not spoken.tokens:
        return None
    reading = read_amount(spoken, 0)
    if reading and reading.end == len(spoken.tokens):
        return reading.value
    # Without a currency word only a price-shaped number ("25.00") is an amount.
    if len(spoken.tokens) == 1 and re.fullmatch(r"[\d,]+\.\d\d", spoken.tokens[0].text):
        return decimal_cents(spoken.tokens[0].text)
    return None


def read_amount(spoken: Spoken, first: int, stop: int | None = None) -> Reading[int] | None:
    """An amount of money in cents starting at tokens[first] that names its currency."""
    tokens = spoken.tokens
    stop = len(tokens) if stop is None else stop
    index = first
    dollar_sign = index < stop and tokens[index].text == "$"
    index += dollar_sign
    if index >= stop:
        return None
    cents = decimal_cents(tokens[index].text)
    if cents is not None:
        index += 1
    else:
        number = read_number(spoken, index, stop)
        if number is None:
            return None
        if not dollar_sign and _is_at(tokens, number.end, stop, CENT_WORDS):
            return spoken.reading(number.value, first, number.end + 1)
        cents, index = number.value * 100, number.end
    named = _is_at(tokens, index, stop, DOLLAR_WORDS)
    index += named
    if not (dollar_sign or named):
        return None
    # "... and fifty cents" after the dollars, or "twelve dollars fifty": the cents said bare.
    tail = index + (index < stop and tokens[index].text == "and")
    change = read_number(spoken, tail, stop)
    if change and change.value < 100 and _is_at(tokens, change.end, stop, CENT_WORDS):
        cents += change.value
        index = change.end + 1
    elif named and change and _bare_cents(spoken, index, change, stop):
        cents += change.value
        index = change.end
    return spoken.reading(cents, first, index)


def read_dollars_and_cents(
    spoken: Spoken, first: int, stop: int | None = None
) -> Reading[tuple[int, ...]] | None:
    """A price said as two numbers, no currency word: "twelve fifty", "one forty-nine".

    The value is every amount in cents the words can mean, most likely first: from ten dollars
    up the head is dollars and the tail cents ("twelve fifty" is $12.50); "one forty-nine" may
    be $1.49 or $149, and "twelve fifty dollars" $12.50 or $1,250, so they have two; "one
    twenty-nine fifty" is $129.50 and "ten sixty-two fifty" $1,062.50. The caller's understanding
    asks again when there are two; the grader takes the nearest the listed price. The context
    decides whether it is money at all.
    """
    tokens = spoken.tokens
    stop = len(tokens) if stop is None else stop
    if first >= stop or not _is_number_word(tokens[first].text):
        return None
    before = tokens[first - 1].text if first else ""
    if before and not tokens[first - 1].pause_after and _is_number_word(before):
        # "four five one two twelve": the middle of a run of number words is no price.
        return None
    head = read_number(spoken, first, first + 1 + (_is_tens_unit(tokens, first, stop)))
    if head is None or tokens[head.end - 1].pause_after or head.end >= stop:
        return None
    if not _is_number_word(tokens[head.end].text) or tokens[head.end].text in UNITS:
        return None
    tail = read_number(spoken, head.end, min(stop, head.end + 2))
    if tail is None or not 10 <= tail.value < 100 or not 1 <= head.value < 100:
        return None
    follows = tokens[tail.end].text if tail.end < stop else None
    if follows in CENT_WORDS or follows in SCALES:
        return None
    cents, dollars = head.value * 100 + tail.value, (head.value * 100 + tail.value) * 100
    if third := _third_group(spoken, tail, stop):
        # "one twenty-nine fifty", "ten sixty-two fifty": hundreds, tens, then the cents.
        return spoken.reading((dollars + third.value,), first, third.end)
    if follows in DOLLAR_WORDS:
        # "twelve fifty dollars": $12.50 or $1,250, and nothing says which.
        return spoken.reading((cents, dollars), first, tail.end + 1)
    return spoken.reading((cents,) if head.value >= 10 else (cents, dollars), first, tail.end)


def _third_group(spoken: Spoken, tail: Reading[int], stop: int) -> Reading[int] | None:
    """The cents after "one twenty-nine", said in the same breath and followed by no unit."""
    tokens = spoken.tokens
    if tokens[tail.end - 1].pause_after or tail.end >= stop:
        return None
    if not _is_number_word(tokens[tail.end].text) or tokens[tail.end].text in UNITS:
        return None
    third = read_number(spoken, tail.end, min(stop, tail.end + 2))
    if third is None or not 10 <= third.value < 100:
        return None
    follows = tokens[third.end].text if third.end < stop else None
    if follows in CENT_WORDS or follows in SCALES or follows in DOLLAR_WORDS:
        return None
    return third


def _bare_cents(spoken: Spoken, index: int, change: Reading[int], stop: int) -> bool:
    """Whether the number after "twelve dollars" is its cents: under 100, said in one breath."""
    tokens = spoken.tokens
    if not 1 <= change.value < 100 or tokens[index - 1].pause_after:
        return False
    follows = tokens[change.end].text if change.end < stop else None
    return follows not in DOLLAR_WORDS and follows not in _COUNTING_WORDS


def _is_at(tokens: Sequence[Token], index: int, stop: int, words: frozenset[str]) -> bool:
    return index < stop and tokens[index].text in words


def _is_number_word(text: str) -> bool:
    return text in UNITS or text in TEENS or text in TENS


def _is_tens_unit(tokens: Sequence[Token], index: int, stop: int) -> bool:
    """ "forty nine" written apart: the tens word and its unit, one number."""
    return (
        tokens[index].text in TENS
        and index + 1 < stop
        and tokens[index + 1].text in UNITS
        and not tokens[index].pause_after
    )
