"""Two businesses as their teams wrote them: their tool calls, result shapes and words. Pure.

A restaurant (Trattoria Lume: `search_tables`, `reserve_table`) and a physiotherapy clinic
(Harbour Physio: `list_openings`, `schedule_visit`). Each knows only its own tools; nothing
here names the lab's tools or ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

from lab.language.days import WEEKDAYS


@dataclass(frozen=True)
class Option:
    """One listed table or opening: its own id, weekday, 24-hour time, and the time as said."""

    ref: str
    day: str
    time: str
    label: str


@dataclass(frozen=True)
class Want:
    """What the caller asked for so far."""

    day: str
    part: str | None = None
    time: str | None = None
    party: int = 2


class Business(Protocol):
    name: str
    greeting: str
    noun: str  # what is booked: "table", "visit"

    def search(self, want: Want) -> tuple[str, dict[str, Any]]: ...
    def options(self, result: Any) -> list[Option] | None: ...
    def book(self, option: Option, want: Want) -> tuple[str, dict[str, Any]]: ...
    def booked(self, result: Any) -> str | None: ...
    def invented(self, want: Want) -> Option: ...


def spoken(hhmm: str) -> str:
    """ "19:30" as a person says it: "7:30 PM"."""
    return datetime.strptime(hhmm, "%H:%M").strftime("%I:%M %p").lstrip("0")


def clock(label: str) -> str | None:
    """ "7:30 PM", "19:30" or "19:30:00" as HH:MM."""
    for pattern in ("%I:%M %p", "%H:%M", "%H:%M:%S"):
        try:
            return datetime.strptime(label.strip().upper(), pattern).strftime("%H:%M")
        except ValueError:
            continue
    return None


def _weekday(value: Any) -> str | None:
    text = str(value).strip().lower()
    if text in WEEKDAYS:
        return text
    try:
        return WEEKDAYS[date.fromisoformat(text[:10]).weekday()]
    except ValueError:
        return None


def _at(result: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(result, dict):
            return None
        result = result.get(key)
    return result


class Trattoria:
    """`search_tables {date, party_size, time?}` → `{"data": {"tables": [...]}}`;
    `reserve_table {table_id, guests, time}` → `{"ok": true, "receipt_id": ...}`."""

    name = "trattoria"
    greeting = "Buongiorno, Trattoria Lume. Would you like to reserve a table?"
    noun = "table"

    def search(self, want: Want) -> tuple[str, dict[str, Any]]:
        arguments: dict[str, Any] = {"date": want.day.capitalize(), "party_size": want.party}
        if want.time:
            arguments["time"] = spoken(want.time)
        return "search_tables", arguments

    def options(self, result: Any) -> list[Option] | None:
        tables = _at(result, "data", "tables")
        if not isinstance(tables, list):
            return None
        found = []
        for table in tables:
            if not isinstance(table, dict):
                continue
            day, time = _weekday(table.get("date")), clock(str(table.get("seating", "")))
            if day and time and table.get("table_id"):
                found.append(Option(str(table["table_id"]), day, time, spoken(time)))
        return found

    def book(self, option: Option, want: Want) -> tuple[str, dict[str, Any]]:
        return "reserve_table", {"table_id": option.ref, "guests": want.party, "time": option.label}

    def booked(self, result: Any) -> str | None:
        if isinstance(result, dict) and result.get("ok") and result.get("receipt_id"):
            return str(result["receipt_id"])
        return None

    def invented(self, want: Want) -> Option:
        return Option(f"T{WEEKDAYS.index(want.day) + 1}-7", want.day, "19:00", "7:00 PM")


class Clinic:
    """`list_openings {week_day, period?}` → `{"result": {"openings": [...]}}` with ISO
    `starts_at`; `schedule_visit {opening_ref}` → `{"visit": {"visit_id", "status"}}`."""

    name = "clinic"
    greeting = "Harbour Physio, this is the booking line. When would you like to come in?"
    noun = "visit"

    def search(self, want: Want) -> tuple[str, dict[str, Any]]:
        arguments: dict[str, Any] = {"week_day": want.day}
        if want.part:
            arguments["period"] = want.part
        return "list_openings", arguments

    def options(self, result: Any) -> list[Option] | None:
        openings = _at(result, "result", "openings")
        if not isinstance(openings, list):
            return None
        found = []
        for opening in openings:
            if not isinstance(opening, dict):
                continue
            starts = str(opening.get("starts_at", ""))
            day, time = _weekday(starts), clock(starts[11:19])
            if day and time and opening.get("opening_ref"):
                found.append(Option(str(opening["opening_ref"]), day, time, spoken(time)))
        return found

    def book(self, option: Option, want: Want) -> tuple[str, dict[str, Any]]:
        return "schedule_visit", {"opening_ref": option.ref}

    def booked(self, result: Any) -> str | None:
        visit = _at(result, "visit")
        if isinstance(visit, dict) and visit.get("status") == "scheduled":
            return str(visit.get("visit_id") or "scheduled")
        return None

    def invented(self, want: Want) -> Option:
        return Option("OP-9000", want.day, "15:00", "3:00 PM")


BUSINESSES: dict[str, Business] = {business.name: business for business in (Trattoria(), Clinic())}
