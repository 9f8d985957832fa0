"""Which day a caller means: weekdays, "tomorrow", "next Tuesday", "the 14th".

Pure: relative days and dates are read against a Week given as data, never the clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from lab.language.numbers import TEENS, TENS, UNITS, Reading, Spoken

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# "sat" and "sun" are left out: as words they are far likelier to be English than weekdays.
_DAYS = {day: day for day in WEEKDAYS} | {
    "mon": "monday",
    "tue": "tuesday",
    "tues": "tuesday",
    "wed": "wednesday",
    "weds": "wednesday",
    "wednesdays": "wednesday",
    "thu": "thursday",
    "thur": "thursday",
    "thurs": "thursday",
    "fri": "friday",
}
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_ORDINAL_SUFFIXES = frozenset({"st", "nd", "rd", "th"})
_ORDINAL_UNITS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
}
_ORDINALS = _ORDINAL_UNITS | {
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
    "twentieth": 20,
    "thirtieth": 30,
}
_QUALIFIERS = frozenset({"next", "this", "coming"})
_NOT_A_DATE = frozenset(
    {"am", "pm", "o'clock", "oclock", "hours", "minutes", "people", "dollars", "bucks"}
)
_RELATIVE = {"today": 0, "tomorrow": 1, "tmrw": 1, "tomorrows": 1}


@dataclass(frozen=True)
class Week:
    """The calendar's bookable week (its Monday) and the day the call takes place."""

    start: date
    today: date

    def weekday(self, day: date) -> str | None:
        """The weekday name of day if it falls in the bookable week, else None."""
        if self.start <= day < self.start + timedelta(days=7):
            return WEEKDAYS[day.weekday()]
        return None

    def date_of(self, weekday: str) -> date:
        return self.start + timedelta(days=WEEKDAYS.index(weekday))

    def span(self) -> str:
        """The bookable weekdays as a caller hears them: "Monday, March 10 to Friday, March 14"."""
        first, last = self.start, self.start + timedelta(days=4)
        return f"{_spoken_date(first)} to {_spoken_date(last)}"


def _spoken_date(day: date) -> str:
    month = _MONTHS[day.month - 1].capitalize()
    return f"{WEEKDAYS[day.weekday()].capitalize()}, {month} {day.day}"


def spoken_date(week: Week | None, weekday: str) -> str:
    """A weekday with its date when the week is known: "Tuesday, March 11"."""
    return _spoken_date(week.date_of(weekday)) if week else weekday.capitalize()


def weekday_of(text: str) -> str | None:
    """The weekday a single word names ("Tues", "Tuesdays", "Tuesday's"), if any."""
    text = text.removesuffix("'s")
    return _DAYS.get(text[:-1] if text.endswith("days") else text)


def read_day(
    spoken: Spoken, first: int, stop: int, week: Week | None
) -> Reading[str | None] | None:
    """A day at tokens[first]; a reading of None is a day said but not settled (ask)."""
    tokens = spoken.tokens
    index = first
    # The bookable week is the coming one, so "next Tuesday" and "this Tuesday" are one day.
    while index < stop - 1 and tokens[index].text in _QUALIFIERS:
        index += 1
    text = tokens[index].text
    if day := weekday_of(text):
        end = index + 1
        if (end < stop and tokens[end].text in ("the", *_MONTHS)) or _is_ordinal(spoken, end, stop):
            dated = _read_date(spoken, end, stop, week)
            if dated is not None:
                # "Tuesday the 14th" must agree with itself, or the caller is asked.
                return spoken.reading(day if dated.value == day else None, first, dated.end)
        return spoken.reading(day, first, end)
    if text in _RELATIVE or (text == "day" and _after_tomorrow(spoken, index, stop)):
        offset, end = (_RELATIVE[text], index + 1) if text in _RELATIVE else (2, index + 3)
        settled = week.weekday(week.today + timedelta(days=offset)) if week else None
        return spoken.reading(settled, index, end)
    return _read_date(spoken, first, stop, week) if index == first else None


def _after_tomorrow(spoken: Spoken, index: int, stop: int) -> bool:
    words = [token.text for token in spoken.tokens[index : min(stop, index + 3)]]
    return words == ["day", "after", "tomorrow"]


def _is_ordinal(spoken: Spoken, index: int, stop: int) -> bool:
    tokens = spoken.tokens
    if index >= stop:
        return False
    if tokens[index].text in _ORDINALS:
        return True
    suffix = index + 1 < stop and tokens[index + 1].text in _ORDINAL_SUFFIXES
    return bool(re.fullmatch(r"\d{1,2}", tokens[index].text)) and suffix


def _read_date(
    spoken: Spoken, first: int, stop: int, week: Week | None
) -> Reading[str | None] | None:
    """ "the 14th", "the fourteenth", "March 14", "14th of March": its weekday in the week."""
    tokens = spoken.tokens
    index = first + (first < stop and tokens[first].text == "the")
    month = None
    if index < stop and tokens[index].text in _MONTHS:
        month, index = _MONTHS.index(tokens[index].text) + 1, index + 1
        index += index < stop and tokens[index].text == "the"
    cued = index > first
    # After "the", a bare "14" is a date too: the recognizer often drops the "th".
    bare = month is not None or (cued and _digits_alone(spoken, index, stop))
    read = _day_of_month(spoken, index, stop, bare_number=bare)
    if read is None or not (cued or read[2]):
        return None
    number, end, _ = read
    words = [token.text for token in tokens[end : min(stop, end + 2)]]
    if month is None and len(words) == 2 and words[0] == "of" and words[1] in _MONTHS:
        month, end = _MONTHS.index(words[1]) + 1, end + 2
    if week is None:
        return spoken.reading(None, first, end)
    for offset in range(7):
        day = week.start + timedelta(days=offset)
        if day.day == number and month in (None, day.month):
            return spoken.reading(week.weekday(day), first, end)
    return spoken.reading(None, first, end)


def _digits_alone(spoken: Spoken, index: int, stop: int) -> bool:
    """A number of one or two digits that no time or count follows ("the 3 pm slot" is a time)."""
    tokens = spoken.tokens
    if index >= stop or not re.fullmatch(r"\d{1,2}", tokens[index].text):
        return False
    after = tokens[index + 1].text if index + 1 < stop else None
    # "the 2 30": an hour then its minutes in digits is a time, not the 2nd.
    minutes = after is not None and bool(re.fullmatch(r"[0-5][05]", after))
    return after not in _NOT_A_DATE and not (minutes and not tokens[index].pause_after)


def _day_of_month(
    spoken: Spoken, index: int, stop: int, *, bare_number: bool
) -> tuple[int, int, bool] | None:
    """A day of the month at tokens[index], where it ends, and whether its form says "date".

    "14th" and "14 th" say so on their own; "fourteenth" and, after a month, "14" need the cue.
    """
    tokens = spoken.tokens
    if index >= stop:
        return None
    text = tokens[index].text
    suffixed = index + 1 < stop and tokens[index + 1].text in _ORDINAL_SUFFIXES
    if re.fullmatch(r"\d{1,2}", text) and (suffixed or bare_number):
        value, end, evident = int(text), index + 1 + suffixed, suffixed
    elif text in _ORDINALS:
        value, end, evident = _ORDINALS[text], index + 1, False
    elif text in TENS and index + 1 < stop and tokens[index + 1].text in _ORDINAL_UNITS:
        value, end, evident = TENS[text] + _ORDINAL_UNITS[tokens[index + 1].text], index + 2, False
    elif bare_number and (text in UNITS or text in TEENS):
        value, end, evident = (UNITS | TEENS)[text], index + 1, False
    else:
        return None
    return (value, end, evident) if 1 <= value <= 31 else None
