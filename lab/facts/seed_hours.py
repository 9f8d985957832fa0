"""Opening hours as businesses write them in the seed's shape, converted to the lab's own.

Pure. Keys name a day or a day range ("mon_fri", "sat", "weekends"); values are "HH:MM-HH:MM",
"closed", a split day ("08:00-12:00, 14:00-17:00", or a list of ranges). A single day may also be
given after a range that covers it ("mon_fri" then "thu"): the day's own hours are its exception.
"""

from __future__ import annotations

import re
from itertools import pairwise

from pydantic import ValidationError

from lab.facts.days import DAY_GROUPS, DAY_NAMES, WEEKDAYS, Weekday, day_range
from lab.facts.errors import ConstraintListError
from lab.facts.schema import DayHours, OpenHours

_DAY_KEYS: dict[str, Weekday] = DAY_NAMES | {"sat": "saturday", "sun": "sunday"}
_GROUP_KEYS = DAY_GROUPS | {"every_day": WEEKDAYS, "everyday": WEEKDAYS}
_RANGE = re.compile(r"(\d{1,2}[:.]\d\d)\s*(?:-|\u2013|to)\s*(\d{1,2}[:.]\d\d)")
_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b|\bthen\b)\s*")
_FORMS = '"HH:MM-HH:MM", "closed", or a split day "08:00-12:00, 14:00-17:00"'

HoursValue = str | list[str]


def convert_hours(hours: dict[str, HoursValue]) -> dict[Weekday, DayHours]:
    """Every listed day's hours; a single day given after a range covering it is its exception."""
    converted: dict[Weekday, DayHours] = {}
    ranged: set[Weekday] = set()
    # Ranges first, single days after, so an exception wins whatever order the keys came in.
    keyed = [(key, value, _days(key)) for key, value in hours.items()]
    keyed.sort(key=lambda item: item[2] is not None and len(item[2]) == 1)
    for key, value, days in keyed:
        path = f"hours.{key}"
        if days is None:
            raise ConstraintListError(
                path, f'not a day or day range: {key!r}; e.g. "mon_fri", "sat", "thursday"'
            )
        day_hours = _day_hours(path, value)
        for day in days:
            if day in converted and not (len(days) == 1 and day in ranged):
                raise ConstraintListError(path, f"{day} is given hours twice")
            converted[day] = day_hours
            if len(days) > 1:
                ranged.add(day)
    return converted


def _day_hours(path: str, value: HoursValue) -> DayHours:
    parts = value if isinstance(value, list) else _SPLIT.split(value.strip())
    parts = [part.strip() for part in parts if part.strip()]
    if [part.lower() for part in parts] == ["closed"]:
        return "closed"
    if not parts:
        raise ConstraintListError(path, f"expected {_FORMS}, got {value!r}")
    ranges: list[OpenHours] = []
    for part in parts:
        match = _RANGE.fullmatch(part)
        if not match:
            raise ConstraintListError(path, f"expected {_FORMS}; {part!r} is not a range")
        opens, closes = (clock.replace(".", ":").zfill(5) for clock in match.groups())
        try:
            ranges.append(OpenHours(opens=opens, closes=closes))
        except ValidationError as error:
            message = error.errors()[0]["msg"].removeprefix("Value error, ")
            raise ConstraintListError(path, message) from None
    for before, after in pairwise(ranges):
        if after.opens < before.closes:
            raise ConstraintListError(
                path,
                f"the ranges of a split day must be in order and apart: {before.opens}-"
                f"{before.closes} then {after.opens}-{after.closes}",
            )
    return ranges[0] if len(ranges) == 1 else tuple(ranges)


def _days(key: str) -> tuple[Weekday, ...] | None:
    """The weekdays a seed hours key names: "mon_fri", "sat", "weekends", "monday"."""
    key = key.strip().lower()
    if key in _GROUP_KEYS:
        return _GROUP_KEYS[key]
    if key in _DAY_KEYS:
        return (_DAY_KEYS[key],)
    parts = re.split("\\s*(?:_|-|\u2013|\\bto\\b|\\bthrough\\b)\\s*", key)
    if len(parts) == 2 and all(part in _DAY_KEYS for part in parts):
        return day_range(_DAY_KEYS[parts[0]], _DAY_KEYS[parts[1]])
    return None
