"""Policies as businesses write them in the seed's shape: codes, sentences, or objects.

Pure. An object is read field by field: a cancellation's free window and late fee, a refund's
window and method become typed fields; any other object is written out as "field: value" parts
("surcharge: $95; applies: after 17:30"), which the named-policy check compares part by part.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from lab.facts.errors import ConstraintListError
from lab.facts.schema import ChangePolicy, Policies, RefundPolicy

_HOURS_BEFORE = re.compile(r"(\d+)_?(h|hours?|d|days?)_before")
_DAYS_WINDOW = re.compile(r"(\d+)_?(d|days?)\b")
# A field's unit from the end of its name: "surcharge_usd", "labor_years", "window_hours".
_UNITS = {
    "usd": "$",
    "dollars": "$",
    "years": "years",
    "months": "months",
    "weeks": "weeks",
    "days": "days",
    "hours": "hours",
    "minutes": "minutes",
    "pct": "%",
    "percent": "%",
}
_CHANGE_NAMES = ("cancellation", "cancel", "cancellations", "reschedule", "rescheduling")


def convert_policies(policies: dict[str, str | dict[str, Any]]) -> Policies:
    """Typed fields read from codes and objects; anything unread stays as text only."""
    refund = cancellation = reschedule = None
    other: dict[str, str] = {}
    for raw_name, value in policies.items():
        name = re.sub(r"[\s-]+", "_", raw_name.strip().lower())
        text = policy_text(name, value)
        fields = value if isinstance(value, dict) else {}
        if name in ("refund", "refunds", "returns"):
            refund = _refund(text, _code(value), fields)
        elif name in _CHANGE_NAMES:
            policy = _change(text, _code(value), fields)
            if name.startswith("cancel"):
                cancellation = policy
            else:
                reschedule = policy
        else:
            other[name] = text
    return Policies(refund=refund, cancellation=cancellation, reschedule=reschedule, other=other)


def policy_text(name: str, value: str | dict[str, Any]) -> str:
    """A policy as words: a code with spaces, a sentence, or an object's fields written out."""
    if isinstance(value, str):
        if not value.strip():
            raise ConstraintListError(
                f"policies.{name}", 'expected the policy as text, e.g. "20_pct_due_at_booking"'
            )
        return value.replace("_", " ") if " " not in value.strip() else value
    if isinstance(value.get("text"), str) and value["text"].strip():
        return str(value["text"])
    if not value:
        raise ConstraintListError(
            f"policies.{name}", 'expected fields, e.g. {"surcharge_usd": 95, "applies": "..."}'
        )
    return "; ".join(_field(key, item) for key, item in value.items())


def _field(key: str, item: object) -> str:
    """One field in words: "surcharge_usd": 95 is "surcharge: $95", "free_until_hours_before": 24
    is "free until 24 hours before"."""
    words = key.lower().split("_")
    at = next((i for i, w in enumerate(words) if w in _UNITS and i > 0), None)
    if isinstance(item, bool):
        return f"{' '.join(words)}: {'yes' if item else 'no'}"
    if at is None:
        return f"{' '.join(words)}: {item}"
    unit, name, rest = _UNITS[words[at]], " ".join(words[:at]), " ".join(words[at + 1 :])
    if unit == "$":
        value = f"${item}"
    elif unit == "%":
        value = f"{item}%"
    else:
        value = f"{item} {unit.rstrip('s') if item == 1 else unit}"
    return f"{name} {value} {rest}".strip() if rest else f"{name}: {value}"


def _code(value: str | dict[str, Any]) -> str:
    return value.lower() if isinstance(value, str) else ""


def _number(fields: dict[str, Any], *parts: str) -> float | None:
    """The first numeric field whose name holds every one of parts."""
    for key, item in fields.items():
        words = set(key.lower().split("_"))
        numeric = isinstance(item, int | float) and not isinstance(item, bool)
        if numeric and all(p in words for p in parts):
            return float(item)
    return None


def _change(text: str, code: str, fields: dict[str, Any]) -> ChangePolicy:
    hours: float | None = None
    before = _HOURS_BEFORE.search(code)
    if before:
        hours = int(before.group(1)) * (24 if before.group(2).startswith("d") else 1)
    free = "free" in code
    if fields:
        by_hours, by_days = _number(fields, "hours"), _number(fields, "days")
        hours = by_hours if by_hours is not None else None if by_days is None else by_days * 24
        free = hours is not None
    fee = next(
        (v for p in (("fee", "usd"), ("fee", "dollars"), ("fee",)) if (v := _number(fields, *p))),
        None,
    )
    return ChangePolicy(
        text=text,
        free_until_hours_before=int(hours) if free and hours is not None else None,
        late_fee_cents=None if fee is None else round(fee * 100),
    )


def _refund(text: str, code: str, fields: dict[str, Any]) -> RefundPolicy:
    method: Literal["original_payment", "store_credit"] | None = None
    said = code or " ".join(f"{k} {v}" for k, v in fields.items()).lower().replace(" ", "_")
    if "store_credit" in said:
        method = "store_credit"
    elif any(word in said for word in ("money_back", "original_payment", "full_refund")):
        method = "original_payment"
    window = _DAYS_WINDOW.search(code)
    days = _number(fields, "days") if fields else (int(window.group(1)) if window else None)
    allowed = fields.get("allowed") if isinstance(fields.get("allowed"), bool) else None
    if allowed is None:
        allowed = False if said.startswith("no_refund") else True if method or days else None
    conditions = fields.get("conditions")
    return RefundPolicy(
        text=text,
        allowed=allowed,
        window_days=None if days is None else int(days),
        method=method,
        conditions=conditions if isinstance(conditions, str) else None,
    )
