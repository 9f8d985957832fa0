"""The values an utterance names, each read once, most specific reading first.

Pure: amounts and order numbers (with and without their cue words), days, landmarks,
bounds, ranges, clock times and parts of the day, each with the fragment it was heard as.
"""

from __future__ import annotations

import re

from lab.language.amounts import DOLLAR_WORDS, decimal_cents, read_amount, read_dollars_and_cents
from lab.language.days import Week, read_day
from lab.language.numbers import (
    HOMOPHONES,
    Reading,
    Spoken,
    Token,
    read_digit_groups,
    read_number,
)
from lab.language.phrases import Phrases
from lab.language.times import (
    Clock,
    is_approximate,
    landmarks,
    read_bare_range,
    read_bounds,
    read_part_of_day,
    read_time,
)

Value = str | int | Clock | None
Candidate = tuple[str, Reading[Value]]

_ORDER_CUE_FILLERS = frozenset({"number", "no", "num", "#", "is", "was", "id", "it's"})
# "number" alone starts an order number unless it is plainly some other number.
_OTHER_NUMBERS = frozenset(
    {"phone", "telephone", "cell", "mobile", "card", "account", "credit", "contact", "my", "your"}
)
# A bare number followed by one of these counts things; it is no amount of money.
_COUNTED = frozenset(
    [
        "items",
        "item",
        "things",
        "thing",
        "times",
        "days",
        "day",
        "weeks",
        "week",
        "months",
        "month",
        "years",
        "year",
        "hours",
        "hour",
        "minutes",
        "minute",
        "people",
        "person",
        "percent",
        "of",
        "pieces",
        "units",
        "boxes",
        "orders",
    ]
)


def extract(
    spoken: Spoken,
    phrases: Phrases,
    *,
    money_talk: bool,
    expecting: tuple[str, ...],
    week: Week | None,
) -> tuple[list[Candidate], bool]:
    """Every value named, and whether the utterance talks money (a refund word, amount, order)."""
    extraction = _Extraction(spoken, expecting, week)
    money_talk = extraction.money(money_talk=money_talk)
    extraction.when(phrases)
    return extraction.candidates, money_talk


class _Extraction:
    """Reads values most specific first, so that each token is read once."""

    def __init__(self, spoken: Spoken, expecting: tuple[str, ...], week: Week | None) -> None:
        self.spoken = spoken
        self.tokens = spoken.tokens
        self.expecting = expecting
        self.week = week
        self.claimed: set[int] = set()
        self.candidates: list[Candidate] = []

    def claim(self, key: str, reading: Reading[Value]) -> None:
        self.candidates.append((key, reading))
        self.claimed.update(range(reading.first, reading.end))

    def free_end(self, first: int) -> int:
        tokens = range(first, len(self.tokens))
        return next((index for index in tokens if index in self.claimed), len(self.tokens))

    def unclaimed(self) -> list[int]:
        return [index for index in range(len(self.tokens)) if index not in self.claimed]

    def money(self, *, money_talk: bool) -> bool:
        spoken, tokens = self.spoken, self.tokens
        for index in self.unclaimed():
            if index in self.claimed:
                continue
            stop = self.free_end(index)
            pair = read_dollars_and_cents(spoken, index, stop)
            if pair and tokens[pair.end - 1].text in DOLLAR_WORDS:
                # "twelve fifty dollars": $12.50 or $1,250; never "fifty dollars" alone.
                self.claim("amount_cents", spoken.reading(None, index, pair.end))
            elif amount := read_amount(spoken, index, stop):
                self.claim("amount_cents", amount)
                self.dangling_cents(amount)
        for index in self.unclaimed():
            # A bare "25.00" is money in a refund and a clock ("9.30") everywhere else.
            text = tokens[index].text
            if re.fullmatch(r"[\d,]+\.\d\d", text) and (
                money_talk or bool(self.candidates) or not _is_clock(text)
            ):
                cents = decimal_cents(text)
                if cents is not None:
                    self.claim("amount_cents", spoken.reading(cents, index, index + 1))
        for index in self.unclaimed():
            if index not in self.claimed and _cues_order_number(tokens, index):
                start = index + 1
                while start < len(tokens) and tokens[start].text in _ORDER_CUE_FILLERS:
                    start += 1
                if start not in self.claimed and (
                    order := read_digit_groups(spoken, start, self.free_end(start))
                ):
                    self.claim("order_number", order)
        money_talk = money_talk or bool(self.candidates)
        if money_talk:
            self.bare_numbers()
        return money_talk

    def bare_numbers(self) -> None:
        """Numbers said without "order" or "dollars" in a refund: the order, or the amount.

        A spelled digit string, or four digits and more, is an order number; a number said as
        a number ("thirty-five", "40") is an amount, unless the agent asked for one alone.
        """
        spoken, tokens, expecting = self.spoken, self.tokens, self.expecting
        wants_order = expecting == ("order_number",)
        for index in self.unclaimed():
            if index in self.claimed or (tokens[index].text in HOMOPHONES and not wants_order):
                continue
            stop = self.free_end(index)
            if not wants_order:
                # Unasked, a number ends at a pause, and "to" or "for" are words again.
                stop = next((i + 1 for i in range(index, stop) if tokens[i].pause_after), stop)
                stop = next((i for i in range(index, stop) if tokens[i].text in HOMOPHONES), stop)
            digits = read_digit_groups(spoken, index, stop)
            number = read_number(spoken, index, stop)
            if number is not None and _at(tokens, number.end) in _COUNTED:
                continue
            if (
                number is not None
                and not wants_order
                and read_dollars_and_cents(spoken, index, stop)
            ):
                # "twelve fifty" is said as a price; an order number is said digit by digit.
                self.claim_amount(number)
                continue
            spelled = digits is not None and (
                digits.value is None
                or len(digits.value) >= 4
                or number is None
                or digits.end > number.end
            )
            have_order = any(key == "order_number" for key, _ in self.candidates)
            open_to_order = wants_order or (spelled and expecting != ("amount_cents",))
            if digits is not None and open_to_order and not have_order:
                self.claim("order_number", digits)
            elif number is not None:
                self.claim_amount(number)

    def dangling_cents(self, amount: Reading[int]) -> None:
        """ "twelve dollars, fifty": after a pause, the cents or a second amount; ask, not guess."""
        tokens, end = self.tokens, amount.end
        if end >= len(tokens) or not tokens[end - 1].pause_after or amount.value % 100:
            return
        tail = read_number(self.spoken, end, self.free_end(end))
        if tail is None or not 1 <= tail.value < 100 or _at(tokens, tail.end) in _COUNTED:
            return
        if _at(tokens, tail.end) in DOLLAR_WORDS or not tokens[tail.end - 1].pause_after:
            return
        self.candidates.remove(("amount_cents", amount))
        self.claim("amount_cents", self.spoken.reading(None, amount.first, tail.end))

    def claim_amount(self, number: Reading[int]) -> None:
        """A bare amount: "forty", or "twelve fifty" ($12.50); "one forty-nine" is left open."""
        tokens, end = self.tokens, number.end
        pair = read_dollars_and_cents(self.spoken, number.first, self.free_end(number.first))
        if pair is not None:
            cents = pair.value[0] if len(pair.value) == 1 else None
            self.claim("amount_cents", self.spoken.reading(cents, pair.first, pair.end))
            return
        follows = (
            end < len(tokens)
            and not tokens[end - 1].pause_after
            and end not in self.claimed
            and read_number(self.spoken, end, self.free_end(end)) is not None
        )
        if follows:
            more = read_number(self.spoken, end, self.free_end(end))
            assert more is not None
            self.claim("amount_cents", self.spoken.reading(None, number.first, more.end))
        else:
            self.claim("amount_cents", self.spoken.reading(number.value * 100, number.first, end))

    def when(self, phrases: Phrases) -> None:
        """Days, landmarks, bounds, ranges, clock times and parts of the day."""
        spoken = self.spoken
        for key, reading in landmarks(phrases):
            if not self.claimed.intersection(range(reading.first, reading.end)):
                self.candidates.append((key, reading))
        for _, seen in self.candidates:
            self.claimed.update(range(seen.first, seen.end))
        for index in self.unclaimed():
            if index in self.claimed:
                continue
            stop = self.free_end(index)
            if day := read_day(spoken, index, stop, self.week):
                self.claim("day", day)
            elif bounds := read_bounds(spoken, index, stop):
                for key, reading in bounds:
                    self.claim(key, reading)
            elif time := read_time(spoken, index, stop):
                self.claim("around" if is_approximate(spoken, time) else "time", time)
            elif ranged := read_bare_range(spoken, index, stop):
                for key, reading in ranged:
                    self.claim(key, reading)
        for index in self.unclaimed():
            if part := read_part_of_day(spoken, index):
                self.claim("part_of_day", spoken.reading(part, index, index + 1))


def _at(tokens: tuple[Token, ...], index: int) -> str | None:
    return tokens[index].text if index < len(tokens) else None


def _cues_order_number(tokens: tuple[Token, ...], index: int) -> bool:
    text = tokens[index].text
    if text in ("order", "#"):
        return True
    return text == "number" and (index == 0 or tokens[index - 1].text not in _OTHER_NUMBERS)


def _is_clock(text: str) -> bool:
    match = re.fullmatch(r"(\d{1,2})[.:](\d\d)", text)
    return match is not None and int(match.group(1)) <= 23 and int(match.group(2)) < 60
