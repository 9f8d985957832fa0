"""The days of the week by the names people write them, and the groups they speak of."""

from __future__ import annotations

from typing import Literal

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAYS: tuple[Weekday, ...] = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)
# "sat" and "sun" are left out: in a sentence they are far likelier to be English words.
DAY_NAMES: dict[str, Weekday] = {day: day for day in WEEKDAYS} | {
    "mon": "monday",
    "tue": "tuesday",
    "tues": "tuesday",
    "wed": "wednesday",
    "weds": "wednesday",
    "thu": "thursday",
    "thur": "thursday",
    "thurs": "thursday",
    "fri": "friday",
}
DAY_GROUPS: dict[str, tuple[Weekday, ...]] = {
    "weekdays": WEEKDAYS[:5],
    "weekday": WEEKDAYS[:5],
    "weekends": WEEKDAYS[5:],
    "weekend": WEEKDAYS[5:],
    "daily": WEEKDAYS,
}


def day_range(first: Weekday, last: Weekday) -> tuple[Weekday, ...] | None:
    """The days from first to last ("monday", "friday"), or None when last comes first."""
    start, end = WEEKDAYS.index(first), WEEKDAYS.index(last)
    return WEEKDAYS[start : end + 1] if start < end else None
