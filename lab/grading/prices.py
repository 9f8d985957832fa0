"""Prices as people say them, read from the values of one clause: the grader's own price reader.

Pure. Built on lab.agent.numbers; the shared reader of spoken amounts should take this over
(see docs/architecture.md): "one forty-nine" is $149, "eighty-five fifty" $85.50, "twelve dollars
fifty" $12.50, "between 80 and 100" a range. A bare number is a price only where the clause
talks money and the number counts nothing else (years, people, an age, an order number).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lab.agent.numbers import Reading, Spoken, Token, read_number
from lab.grading.lexicon import Values

PRICE_CUE = re.compile(
    r"\b(?:costs?|price[ds]?|pricing|charge[sd]?|runs?|running|pay|paying|fee|rate|quote[ds]?|"
    r"total|comes?\s+to|dollars?|bucks|\$|how\s+much|is\s+just|only)\b|\$"
)
_ONES = frozenset({"one", "two", "three", "four", "five", "six", "seven", "eight", "nine"})
# Words after a number that say it counts or measures something other than money.
_NOT_MONEY_AFTER = frozenset(
    {"years", "year", "yrs", "old", "people", "persons", "staff", "mechanics", "technicians"}
    | {"locations", "stores", "shops", "branches", "times", "bikes", "cars", "kids", "children"}
    | {"pets", "dogs", "cats", "visits", "sessions", "classes", "guests", "seats", "rooms"}
    | {"miles", "km", "kilometers", "kilometres", "feet", "pounds", "lbs", "kg", "stars"}
    | {"reviews", "customers", "clients", "patients", "members", "items", "pieces", "units"}
    | {"o'clock", "am", "pm", "percent", "pct", "%", "days", "weeks", "months", "hours"}
    | {"minutes", "mins", "nights", "people's", "th", "st", "nd", "rd", "floor", "street"}
)
_NOT_MONEY_BEFORE = frozenset(
    {"age", "ages", "aged", "number", "no", "#", "order", "ticket", "room", "suite", "unit"}
    | {"extension", "ext", "reference", "ref", "code", "id", "invoice", "receipt", "claim"}
    | {"policy", "account", "member", "route", "highway", "interstate", "exit", "floor"}
    | {"step", "level", "over", "under", "top", "since", "in", "of", "every", "press", "dial"}
    | {"option", "line", "at"}
)
_MONEY_AFTER = frozenset(
    {"dollars", "bucks", "cents", "plus", "less", "extra", "flat", "apiece", "tops"}
    | {"upfront", "deposits", "fees", "charges", "rates", "prices", "costs", "this", "was"}
)
_RANGE_JOIN = frozenset({"to", "and", "or", "-", "through"})


@dataclass(frozen=True)
class PriceRange:
    """ "between $80 and $100": consistent when the listed price lies inside."""

    heard: str
    low: int
    high: int
    first: int
    end: int


def read_prices(values: Values, priced: bool) -> list[PriceRange]:
    """Merge spoken price forms into values.amounts and take the ranges out; bare numbers become
    dollars only when priced (the clause or the caller talks money)."""
    spoken = values.spoken
    tokens = spoken.tokens
    _dollars_then_cents(values)
    if priced:
        for number in sorted(values.numbers, key=lambda r: r.first):
            if number not in values.numbers or not _is_money(tokens, number):
                continue
            values.numbers.remove(number)
            values.amounts.append(_spoken_price(spoken, values, number))
    return _ranges(values)


def _dollars_then_cents(values: Values) -> None:
    """ "twelve dollars fifty": the number after the dollar word is its cents."""
    tokens = values.spoken.tokens
    for amount in list(values.amounts):
        if amount.value % 100 or tokens[amount.end - 1].text not in ("dollars", "dollar", "bucks"):
            continue
        change = next((n for n in values.numbers if n.first == amount.end), None)
        if change and 0 < change.value < 100 and not _counts(tokens, change.end):
            values.numbers.remove(change)
            values.amounts.remove(amount)
            values.amounts.append(
                values.spoken.reading(amount.value + change.value, amount.first, change.end)
            )


def _spoken_price(spoken: Spoken, values: Values, number: Reading[int]) -> Reading[int]:
    """ "one forty-nine" is $149 and "eighty-five fifty" $85.50: two spoken groups, one price."""
    tokens = spoken.tokens
    first, end, value = number.first, number.end, number.value * 100
    head = first - 1
    worded = not tokens[first].text[0].isdigit()
    if head >= 0 and worded and tokens[head].text in _ONES and 10 <= number.value < 100:
        hundreds = read_number(spoken, head, head + 1)
        if hundreds is not None and not tokens[head].pause_after:
            dollars = hundreds.value * 100 + number.value
            # "one twenty-nine fifty": the third group is the cents.
            cents = next((n for n in values.numbers if n.first == end), None)
            if cents and 10 <= cents.value < 100 and not tokens[end - 1].pause_after:
                values.numbers.remove(cents)
                return spoken.reading(dollars * 100 + cents.value, head, cents.end)
            return spoken.reading(dollars * 100, head, end)
    follow = next((n for n in values.numbers if n.first == end), None)
    if worded and follow and 10 <= follow.value < 100 and not tokens[end - 1].pause_after:
        values.numbers.remove(follow)
        if number.value < 10:
            return spoken.reading((number.value * 100 + follow.value) * 100, first, follow.end)
        if number.value < 100:
            return spoken.reading(value + follow.value, first, follow.end)
        values.numbers.append(follow)
    return spoken.reading(value, first, end)


def _is_money(tokens: tuple[Token, ...], number: Reading[int]) -> bool:
    if number.value == 0 or number.value > 100_000:
        return False
    if number.first > 0 and tokens[number.first - 1].text in _NOT_MONEY_BEFORE:
        return False
    # A long digit string is an identifier ("4512"), not "forty-five hundred dollars".
    text = tokens[number.first].text
    if text.isdigit() and len(text) >= 4 and number.end == number.first + 1:
        return False
    return not _counts(tokens, number.end)


def _counts(tokens: tuple[Token, ...], end: int) -> bool:
    """A number followed by what it counts: "3 locations", "twelve groomers", "50 pounds"."""
    if end >= len(tokens):
        return False
    word = tokens[end].text.strip(".,")
    if word in _NOT_MONEY_AFTER:
        return True
    # Any plural noun but the money words and the words that follow a price.
    return word.isalpha() and word.endswith("s") and len(word) > 3 and word not in _MONEY_AFTER


def _ranges(values: Values) -> list[PriceRange]:
    """Pairs of amounts joined by "to", "and" or a dash after "between" or "from", or a dash."""
    tokens = values.spoken.tokens
    amounts = sorted(values.amounts, key=lambda r: r.first)
    ranges: list[PriceRange] = []
    index = 0
    while index + 1 < len(amounts):
        low, high = amounts[index], amounts[index + 1]
        between = [t.text for t in tokens[low.end : high.first]]
        dashed = not between and "-" in values.gap(low.end - 1)
        opened = low.first > 0 and tokens[low.first - 1].text in ("between", "from")
        joined = len(between) == 1 and between[0] in _RANGE_JOIN
        if (
            dashed or (joined and (opened or between[0] in ("to", "-")))
        ) and low.value < high.value:
            first = low.first - opened
            heard = values.spoken.fragment(first, high.end)
            ranges.append(PriceRange(heard, low.value, high.value, first, high.end))
            values.amounts.remove(low)
            values.amounts.remove(high)
            index += 2
            continue
        index += 1
    return ranges
