"""Reading the values an agent sentence names: amounts, percentages, durations, clock times, days.

Pure. Amounts, numbers and times told against the hour come from the one reader the caller's
understanding uses too (lab.language.amounts, .numbers, .times); this module adds what an agent
says about a business and a caller does not: opening times, day ranges, notice periods and
refund windows. Each value keeps the tokens it was read from, so each is read once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

from lab.facts.days import DAY_GROUPS, DAY_NAMES, WEEKDAYS, Weekday, day_range
from lab.language.amounts import decimal_cents, read_amount
from lab.language.numbers import (
    TEENS,
    TENS,
    UNITS,
    Reading,
    Spoken,
    Token,
    read_number,
    tokenize,
)
from lab.language.times import read_relative_time

_DAY_WORDS: dict[str, Weekday] = DAY_NAMES | {f"{day}s": day for day in WEEKDAYS}
_RANGE_WORDS = frozenset({"to", "through", "thru", "till", "til", "until"})
_UNIT_HOURS = {
    "minute": 1 / 60,
    "minutes": 1 / 60,
    "min": 1 / 60,
    "mins": 1 / 60,
    "hour": 1.0,
    "hours": 1.0,
    "hr": 1.0,
    "hrs": 1.0,
    "h": 1.0,
    "day": 24.0,
    "days": 24.0,
    "week": 168.0,
    "weeks": 168.0,
    "fortnight": 336.0,
    "month": 720.0,
    "months": 720.0,
    "year": 8760.0,
    "years": 8760.0,
}
_MERIDIEM_PHRASES = {
    ("in", "the", "morning"): "am",
    ("in", "the", "afternoon"): "pm",
    ("in", "the", "evening"): "pm",
    ("at", "night"): "pm",
}
_PRICE_SHAPED = re.compile(r"[\d,]+\.\d\d")
_DASH = re.compile("[-\u2013]")
V = TypeVar("V")


@dataclass(frozen=True)
class Clock:
    """A time as said; without a.m./p.m. "five" may be 5:00 or 17:00."""

    hour: int
    minute: int
    meridiem: str | None

    def candidates(self) -> tuple[int, ...]:
        """Every minute-of-day the time can mean."""
        base = self.hour % 12 * 60 + self.minute
        if self.meridiem == "am":
            return (base,)
        if self.meridiem == "pm":
            return (base + 720,)
        if self.hour == 0 or self.hour > 12:
            return (self.hour * 60 + self.minute,)
        return (base, base + 720)


NOON = Clock(12, 0, "pm")
MIDNIGHT = Clock(0, 0, None)


_NUMBER_WORDS = frozenset({*UNITS, *TEENS, *TENS, "hundred", "thousand"})


@dataclass(frozen=True)
class Duration:
    hours: float


@dataclass
class Values:
    """Everything one sentence names, and which tokens each reading took."""

    spoken: Spoken
    amounts: list[Reading[int]]
    percents: list[Reading[int]]
    durations: list[Reading[Duration]]
    times: list[Reading[Clock]]
    days: list[Reading[tuple[Weekday, ...]]]
    numbers: list[Reading[int]]
    claimed: set[int]
    # Every meaning of a spoken price by its first token ("eleven fifty": $11.50 or $1,150).
    meanings: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def gap(self, index: int) -> str:
        """The raw text between tokens[index] and the next token."""
        tokens = self.spoken.tokens
        end = tokens[index + 1].start if index + 1 < len(tokens) else len(self.spoken.text)
        return self.spoken.text[tokens[index].end : end]


def read_values(text: str, *, skip: set[int] | None = None, timely: bool = False) -> Values:
    """Read every value in text, most specific first; tokens in skip are never read.

    timely: the sentence is about hours or slots, so a bare number after "at" or before "to"
    is a clock time rather than an unattributed number.
    """
    spoken = tokenize(text)
    values = Values(spoken, [], [], [], [], [], [], set(skip or ()))
    tokens = spoken.tokens
    for index in range(len(tokens)):
        if index not in values.claimed and (
            amount := read_amount(spoken, index, _free(values, index))
        ):
            _claim(values, values.amounts, amount)
    for index, token in enumerate(tokens):
        free = index not in values.claimed
        if free and _PRICE_SHAPED.fullmatch(token.text) and not (timely and _is_clock(token.text)):
            cents = decimal_cents(token.text)
            if cents is not None:
                _claim(values, values.amounts, spoken.reading(cents, index, index + 1))
    for index in range(len(tokens)):
        if index not in values.claimed and (percent := _read_percent(values, index)):
            _claim(values, values.percents, percent)
    for index in range(len(tokens)):
        if index not in values.claimed and (duration := _read_duration(values, index)):
            _claim(values, values.durations, duration)
    for index in range(len(tokens)):
        if index not in values.claimed and (clock := _read_clock(values, index, timely)):
            _claim(values, values.times, clock)
    for index in range(len(tokens)):
        if index not in values.claimed and (days := _read_days(values, index)):
            _claim(values, values.days, days)
    for index in range(len(tokens)):
        if index not in values.claimed and (
            number := read_number(spoken, index, _free(values, index))
        ):
            # "one moment", "a tune-up": a lone "one" or "a" names no quantity worth checking.
            if tokens[index].text in ("a", "one", "and") and number.end == index + 1:
                continue
            _claim(values, values.numbers, number)
    return values


def _claim(values: Values, found: list[Reading[V]], reading: Reading[V]) -> None:
    found.append(reading)
    values.claimed.update(range(reading.first, reading.end))


def _free(values: Values, first: int) -> int:
    """The end of the run of unclaimed tokens that starts at first."""
    tokens = values.spoken.tokens
    return next((i for i in range(first, len(tokens)) if i in values.claimed), len(tokens))


def _is_clock(text: str) -> bool:
    match = re.fullmatch(r"(\d{1,2})[.:](\d\d)", text)
    return match is not None and int(match.group(1)) <= 24 and int(match.group(2)) < 60


def _read_percent(values: Values, index: int) -> Reading[int] | None:
    spoken = values.spoken
    number = read_number(spoken, index, _free(values, index))
    if number is None:
        return None
    if "%" in values.gap(number.end - 1):
        return spoken.reading(number.value, index, number.end)
    tokens = spoken.tokens
    if number.end < len(tokens) and tokens[number.end].text in ("percent", "pct"):
        return spoken.reading(number.value, index, number.end + 1)
    return None


def _read_duration(values: Values, index: int) -> Reading[Duration] | None:
    """ "30 days", "thirty-day", "24h", "a week", "two weeks", "48 hours'"."""
    spoken = values.spoken
    tokens = spoken.tokens
    stop = _free(values, index)
    if tokens[index].text in ("a", "an") and index + 1 < stop:
        amount, end = 1, index + 1
    elif number := read_number(spoken, index, stop):
        amount, end = number.value, number.end
    else:
        return None
    if end >= stop or tokens[end].text.removesuffix("'s") not in _UNIT_HOURS:
        return None
    unit = tokens[end].text.removesuffix("'s")
    # "a day" before "a week" is a rate ("seven days a week"), not a notice period; so is
    # "a month" after a price ("$175 a month", "one seventy-five a month").
    before = tokens[index - 1].text if index > 0 else ""
    priced = before.isdigit() or before in _NUMBER_WORDS or before in ("dollars", "bucks")
    if priced and tokens[index].text in ("a", "an"):
        return None
    rate = before in ("days", "hours")
    if rate and tokens[index].text in ("a", "an") and unit in ("day", "week"):
        return None
    return spoken.reading(Duration(amount * _UNIT_HOURS[unit]), index, end + 1)


def _read_clock(values: Values, index: int, timely: bool) -> Reading[Clock] | None:
    spoken = values.spoken
    tokens = spoken.tokens
    stop = _free(values, index)
    text = tokens[index].text
    if text in ("noon", "midday"):
        return spoken.reading(NOON, index, index + 1)
    if text == "midnight":
        return spoken.reading(MIDNIGHT, index, index + 1)
    if text in ("half", "quarter"):
        return _read_relative(values, index, stop)
    written = re.fullmatch(r"(\d{1,2})[:.](\d\d)", text)
    if written:
        hour, minute, end = int(written.group(1)), int(written.group(2)), index + 1
    elif number := read_number(spoken, index, min(stop, index + 1)):
        hour, minute, end = number.value, 0, number.end
        # "eight thirty": spoken minutes after an hour word.
        spelled = None if text.isdigit() or end >= stop else read_number(spoken, end, stop)
        if spelled and 1 < spelled.value < 60 and spelled.value % 5 == 0:
            minute, end = spelled.value, spelled.end
    else:
        return None
    if hour > 24 or minute >= 60:
        return None
    o_clock = end < stop and tokens[end].text in ("o'clock", "oclock")
    end += o_clock
    meridiem, end = _meridiem(tokens, end, stop)
    cued = index > 0 and tokens[index - 1].text in _TIME_CUES
    ranged = end < len(tokens) and (
        tokens[end].text in _RANGE_WORDS or bool(_DASH.search(values.gap(end - 1)))
    )
    # "so twelve thirty is fine": a time offered in a sentence about hours.
    offered = end < len(tokens) and tokens[end].text in ("is", "works", "would", "should")
    if not (written or meridiem or o_clock or (timely and (cued or ranged or offered))):
        return None
    if meridiem and hour > 12:
        return None
    return spoken.reading(Clock(hour, minute, meridiem), index, end)


def _read_relative(values: Values, index: int, stop: int) -> Reading[Clock] | None:
    """ "half past eight", "a quarter to six", "half two": the caller's reader of such times."""
    spoken = values.spoken
    told = read_relative_time(spoken, index, stop)
    if told is None:
        return None
    clock = told.value
    meridiem, end = (
        (clock.meridiem, told.end) if clock.meridiem else _meridiem(spoken.tokens, told.end, stop)
    )
    return spoken.reading(Clock(clock.hour, clock.minute, meridiem), index, end)


_TIME_CUES = frozenset(
    {"at", "from", "until", "till", "til", "to", "through", "by", "between", "and", "opens"}
    | {"open", "closes", "close", "around", "before", "after", "past", "-"}
)


def _meridiem(tokens: tuple[Token, ...], index: int, stop: int) -> tuple[str | None, int]:
    if index < stop and tokens[index].text in ("am", "pm"):
        return tokens[index].text, index + 1
    for phrase, meridiem in _MERIDIEM_PHRASES.items():
        words = tuple(token.text for token in tokens[index : index + len(phrase)])
        if words == phrase and index + len(phrase) <= stop:
            return meridiem, index + len(phrase)
    return None, index


def _read_days(values: Values, index: int) -> Reading[tuple[Weekday, ...]] | None:
    """ "Monday", "Saturdays", "weekdays", "Monday to Friday", "Mon-Fri"."""
    spoken = values.spoken
    tokens = spoken.tokens
    text = tokens[index].text.removesuffix("'s")
    if text in DAY_GROUPS:
        return spoken.reading(DAY_GROUPS[text], index, index + 1)
    if text not in _DAY_WORDS:
        return None
    stop = _free(values, index)
    worded = index + 1 < stop and tokens[index + 1].text in _RANGE_WORDS
    connector = worded or bool(index + 1 < stop and _DASH.search(values.gap(index)))
    last_at = index + 1 + worded
    last = tokens[last_at].text.removesuffix("'s") if last_at < stop else ""
    if connector and last in _DAY_WORDS and (days := day_range(_DAY_WORDS[text], _DAY_WORDS[last])):
        return spoken.reading(days, index, last_at + 1)
    return spoken.reading((_DAY_WORDS[text],), index, index + 1)
