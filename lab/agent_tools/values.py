"""Argument values as agents write them, read into the lab's terms and written back. Pure.

Machine values, not speech: "Tuesday", "tue", "2025-03-11" and, a Monday, "tomorrow" are the
calendar's tuesday; "9am", "9:30 PM", "0930", "21:00:00" and "2025-03-11T09:30" are clock times.
What cannot be read is None, and the caller of these functions says which argument it was.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation

from lab.language.days import WEEKDAYS, Week, weekday_of

_CLOCK = re.compile(
    r"^(?P<h>\d{1,2})(?::?(?P<m>\d{2}))?(?::\d{2}(?:\.\d+)?)?\s*(?P<ap>[ap])?\.?\s*m?\.?$"
)
_RELATIVE = {"today": 0, "tomorrow": 1}
_ISO_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[Tt ](.+))?$")


def read_day(value: object, week: Week | None, *, own_week: bool = False) -> str | None:
    """A weekday name ("tuesday") from a name, an abbreviation or an ISO date.

    A date outside the lab's week names its weekday: an agent dates "Tuesday" on its own calendar.
    Outside the business's own week (its tools file's `today`), a date is no day it can book.
    """
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if (iso := _ISO_DATE.match(text)) is not None:
        try:
            day = date.fromisoformat(iso.group(1))
        except ValueError:
            return None
        if week is not None and (weekday := week.weekday(day)) is not None:
            return weekday
        return None if own_week else WEEKDAYS[day.weekday()]
    if text in _RELATIVE:
        return week.weekday(week.today + timedelta(days=_RELATIVE[text])) if week else None
    return weekday_of(text.rstrip("."))


def read_time(value: object) -> str | None:
    """A clock time as HH:MM from "9am", "9:30 PM", "0930", "21:00:00" or an ISO date-time."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if (iso := _ISO_DATE.match(text)) is not None:
        text = (iso.group(2) or "").strip()
        text = re.sub(r"(?:z|[+-]\d{2}:?\d{2})$", "", text)
    match = _CLOCK.match(text.replace(" ", "") if text.endswith("m") else text)
    if match is None:
        return None
    hour, minute = int(match["h"]), int(match["m"] or 0)
    if meridiem := match["ap"]:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if meridiem == "p" else 0)
    elif match["m"] is None and len(match["h"]) < 3:
        return None  # a bare "9" could be a count; a time has minutes or a meridiem
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"


def read_datetime(
    value: object, week: Week | None, *, own_week: bool = False
) -> tuple[str | None, str | None]:
    """The weekday and the time of an ISO date-time ("2025-03-11T09:30:00")."""
    return read_day(value, week, own_week=own_week), read_time(value)


def read_cents(value: object, *, whole_units: bool) -> int | None:
    """An amount in cents: cents as an integer, or whole units ("12.50", 12.5) when whole_units."""
    if isinstance(value, bool):
        return None
    if not whole_units:
        return value if isinstance(value, int) and value > 0 else None
    try:
        amount = Decimal(str(value).strip().lstrip("$").replace(",", ""))
    except InvalidOperation:
        return None
    cents = amount * 100
    if cents <= 0 or cents != cents.to_integral_value():
        return None
    return int(cents)


def write_day(weekday: str, style: str, week: Week | None) -> str:
    """A weekday as the agent's results write it: "Tuesday", "tuesday" or its ISO date."""
    if style == "iso" and week is not None:
        return week.date_of(weekday).isoformat()
    return weekday if style == "weekday" else weekday.capitalize()


def write_time(hhmm: str, style: str) -> str:
    """A time as the agent's results write it: "09:30" or "9:30 AM"."""
    if style != "12h":
        return hhmm
    stamp = datetime.strptime(hhmm, "%H:%M")
    return stamp.strftime("%I:%M %p").lstrip("0")
