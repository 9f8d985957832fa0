"""Which numbers in one clause are prices, and which pairs are ranges: the grader's decisions.

Pure. How spoken amounts compose ("one forty-nine", "eighty-five fifty", "twelve dollars fifty")
is read by lab.language.amounts, the reader the caller's understanding uses too; this module decides
that a bare number is a price only where the clause talks money and the number counts nothing
else (years, people, an age, an order number), and reads "between 80 and 100" as a range.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lab.grading.lexicon import Values
from lab.language.amounts import read_dollars_and_cents
from lab.language.numbers import Reading, Token

PRICE_CUE = re.compile(
    r"\b(?:costs?|price[ds]?|pricing|charge[sd]?|runs?|running|pay|paying|fee|rate|quote[ds]?|"
    r"total|comes?\s+to|dollars?|bucks|\$|how\s+much|is\s+just|only)\b|\$"
)
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
    tokens = values.spoken.tokens
    if priced:
        for number in sorted(values.numbers, key=lambda r: r.first):
            if number not in values.numbers or not _is_money(tokens, number):
                continue
            values.numbers.remove(number)
            values.amounts.append(_spoken_price(values, number))
    return _ranges(values)


def _spoken_price(values: Values, number: Reading[int]) -> Reading[int]:
    """The price a bare number says, composed by the shared reader with the groups around it.

    "one forty-nine" may be $1.49 or $149 and "eleven fifty" $11.50 or $1,150: every meaning is
    kept in values.meanings, and the check takes the one nearest the listed price; the reading
    itself is the shared reader's last (a price list's whole price).
    """
    spoken, tokens = values.spoken, values.spoken.tokens
    taken = {i for n in [number, *values.numbers] for i in range(n.first, n.end)}
    head = number.first - 1
    # "one" said alone is left unread by the lexicon; it may be the head of "one forty-nine".
    starts = ([head] if head >= 0 and head not in values.claimed else []) + [number.first]
    for first in starts:
        stop = next(
            (i for i in range(first, len(tokens)) if i in values.claimed and i not in taken),
            len(tokens),
        )
        pair = read_dollars_and_cents(spoken, first, stop)
        if pair is None or pair.first > number.first or pair.end < number.end:
            continue
        covered = [n for n in values.numbers if n.first < pair.end and n.end > pair.first]
        if all(pair.first <= n.first and n.end <= pair.end for n in covered):
            for other in covered:
                values.numbers.remove(other)
            meanings = pair.value
            if len(meanings) == 1 and 1_000 <= meanings[0] < 10_000:
                # "eleven fifty" after a price of $1,250 may be $1,150: hundreds, said short.
                meanings = (meanings[0], meanings[0] * 100)
            values.meanings[pair.first] = meanings
            return spoken.reading(pair.value[-1], pair.first, pair.end)
    cents = _cents_after(values, number)
    if cents is not None:
        # "a hundred nine sixty-five": the dollars in words, then the cents in one breath.
        values.numbers.remove(cents)
        return spoken.reading(number.value * 100 + cents.value, number.first, cents.end)
    return spoken.reading(number.value * 100, number.first, number.end)


def _cents_after(values: Values, number: Reading[int]) -> Reading[int] | None:
    """The cents said right after a whole number of dollars with a scale word in it."""
    tokens = values.spoken.tokens
    said = {t.text for t in tokens[number.first : number.end]}
    if not said & {"hundred", "thousand"} or tokens[number.end - 1].pause_after:
        return None
    after = next((n for n in values.numbers if n.first == number.end), None)
    if after is None or not 10 <= after.value < 100 or after.end - after.first > 2:
        return None
    if after.end < len(tokens) and tokens[after.end].text in _NOT_MONEY_AFTER:
        return None
    return after


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
    _low_one(values)
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
        low = _scaled_like(values, low, high)
        if (
            dashed or (joined and (opened or between[0] in ("to", "-")))
        ) and low.value < high.value:
            first = low.first - opened
            heard = values.spoken.fragment(first, high.end)
            ranges.append(PriceRange(heard, low.value, high.value, first, high.end))
            values.amounts.remove(amounts[index])
            values.amounts.remove(high)
            index += 2
            continue
        index += 1
    return ranges


def _low_one(values: Values) -> None:
    """ "between one and two thousand": the lone "one" the lexicon leaves unread is the low end."""
    tokens = values.spoken.tokens
    starts = {a.first for a in values.amounts}
    for index in range(1, len(tokens) - 2):
        opened = tokens[index - 1].text in ("between", "from")
        joined = tokens[index + 1].text in ("and", "to")
        if opened and joined and tokens[index].text == "one" and index + 2 in starts:
            values.amounts.append(values.spoken.reading(100, index, index + 1))


def _scaled_like(values: Values, low: Reading[int], high: Reading[int]) -> Reading[int]:
    """ "between two and three hundred": the low end shares the high end's scale word."""
    tokens = values.spoken.tokens
    scale = {"hundred": 100, "thousand": 1000}.get(tokens[high.end - 1].text)
    one_word = low.end - low.first == 1 and tokens[low.first].text.isalpha()
    if scale and one_word and low.value % 100 == 0 and low.value * scale < high.value:
        return values.spoken.reading(low.value * scale, low.first, low.end)
    return low
