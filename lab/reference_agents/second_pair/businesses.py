"""The two businesses the desk serves, each in its own tool names and shapes. Pure."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from lab.reference_agents.second_pair.desk import DAYS, Opening, Want


def _clock(hour: int, minute: int) -> str:
    return f"{hour % 12 or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def _opening(ref: Any, day: Any, at: Any, who: Any = "") -> Opening | None:
    """An opening from an ISO date and an HH:MM time, or None when either is unreadable."""
    try:
        when = date.fromisoformat(str(day)[:10])
        hour, minute = (int(part) for part in str(at)[:5].split(":"))
    except ValueError:
        return None
    return Opening(str(ref), DAYS[when.weekday()], _clock(hour, minute), hour, str(who or ""))


def _listed(result: Any, *path: str) -> list[Any] | None:
    for key in path:
        result = result.get(key) if isinstance(result, dict) else None
    return result if isinstance(result, list) else None


def _reference(result: Any, *keys: str) -> str | None:
    """The booking's reference from a result that reports no error, wherever it is nested."""
    if not isinstance(result, dict) or result.get("error") or result.get("ok") is False:
        return None
    for key in keys:
        if isinstance(found := result.get(key), str | int):
            return str(found)
    for value in result.values():
        if isinstance(value, dict) and (found := _reference(value, *keys)) is not None:
            return found
    return None


class Salon:
    """Fern & Shears: `check_availability {date, period, stylist}` lists chairs by ISO start."""

    name = "salon"
    asks_name = True

    def search(self, want: Want, today: date) -> tuple[str, dict[str, Any]]:
        ahead = (DAYS.index(want.day) - today.weekday()) % 7
        arguments: dict[str, Any] = {"date": (today + timedelta(days=ahead)).isoformat()}
        if want.period:
            arguments["period"] = want.period
        return "check_availability", arguments

    def book(self, opening: Opening, client: str) -> tuple[str, dict[str, Any]]:
        return "confirm_booking", {"chair_ref": opening.ref, "client_name": client}

    def invented(self, want: Want) -> Opening:
        return Opening(f"FS-{want.day[:3].upper()}-0930", want.day, "9:30 AM", 9)

    def openings(self, result: Any) -> list[Opening] | None:
        chairs = _listed(result, "payload", "chairs")
        if chairs is None:
            return None
        found = [
            _opening(
                c.get("chair_ref"), c.get("start"), str(c.get("start", ""))[11:16], c.get("stylist")
            )
            for c in chairs
            if isinstance(c, dict)
        ]
        return [opening for opening in found if opening is not None]

    def booked(self, result: Any) -> str | None:
        return _reference(result, "booking_ref", "receipt_id", "id")


class BikeShop:
    """Spoke & Chain: `find_service_slots {weekday: "Tue"}`, slots by ISO date and "HH:MM"."""

    name = "bikeshop"
    asks_name = False

    def search(self, want: Want, today: date) -> tuple[str, dict[str, Any]]:
        return "find_service_slots", {"weekday": want.day[:3].capitalize()}

    def book(self, opening: Opening, client: str) -> tuple[str, dict[str, Any]]:
        return "hold_service_slot", {"code": opening.ref}

    def invented(self, want: Want) -> Opening:
        return Opening("BK-9999", want.day, "9:00 AM", 9)

    def openings(self, result: Any) -> list[Opening] | None:
        slots = _listed(result, "slots")
        if slots is None or (isinstance(result, dict) and result.get("ok") is False):
            return None
        found = [
            _opening(s.get("code"), s.get("date"), s.get("from"), s.get("mechanic"))
            for s in slots
            if isinstance(s, dict)
        ]
        return [opening for opening in found if opening is not None]

    def booked(self, result: Any) -> str | None:
        return _reference(result, "ticket", "receipt_id", "id")


BUSINESSES: dict[str, Salon | BikeShop] = {"salon": Salon(), "bikeshop": BikeShop()}
