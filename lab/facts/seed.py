"""The constraint-list shape printed in the per-turn grader seed, converted to the lab's own.

Pure. The seed's list has no version, names prices in dollars, hours by day or day range
("mon_fri": "08:00-18:00" or "closed"), policies as short codes and capabilities as a list of
what the agent can do; everything not listed there is something it cannot claim.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lab.events.chain import digest
from lab.facts.days import DAY_GROUPS, DAY_NAMES, WEEKDAYS, Weekday, day_range
from lab.facts.errors import ConstraintListError, error_from_validation
from lab.facts.schema import (
    Capability,
    ChangePolicy,
    ConstraintList,
    DayHours,
    OpenHours,
    Policies,
    Promotion,
    RefundPolicy,
)

_DAY_KEYS: dict[str, Weekday] = DAY_NAMES | {"sat": "saturday", "sun": "sunday"}
_GROUP_KEYS = DAY_GROUPS | {"every_day": WEEKDAYS, "everyday": WEEKDAYS}
_CAPABILITY_NAMES = {c.value: c for c in Capability} | {
    "book": Capability.BOOK_APPOINTMENT,
    "booking": Capability.BOOK_APPOINTMENT,
    "reschedule": Capability.RESCHEDULE_APPOINTMENT,
    "cancel": Capability.CANCEL_APPOINTMENT,
    "refund": Capability.REFUND_ORDER,
    "refunds": Capability.REFUND_ORDER,
    "transfer": Capability.TRANSFER_CALL,
    "take_messages": Capability.TAKE_MESSAGE,
    "callback": Capability.TAKE_MESSAGE,
    "order_status": Capability.LOOKUP_ORDER_STATUS,
}
_RANGE = re.compile(r"(\d{1,2}:\d\d)\s*-\s*(\d{1,2}:\d\d)")
_HOURS_BEFORE = re.compile(r"(\d+)_?(h|hours?|d|days?)_before")
_DAYS_WINDOW = re.compile(r"(\d+)_?(d|days?)\b")
_PERCENT = re.compile(r"(\d{1,3})\s*(?:%|percent|_pct)")


class SeedPrice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    service: str = Field(min_length=1)
    price_usd: Decimal = Field(ge=0, decimal_places=2)


class SeedPromotion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = None
    description: str = Field(min_length=1)
    percent_off: int | None = None
    price_usd: Decimal | None = Field(default=None, ge=0, decimal_places=2)
    service: str | None = None


class SeedList(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tenant: str | None = None
    version: str | None = None
    business: str | None = None
    price_list: tuple[SeedPrice, ...] = Field(min_length=1)
    hours: dict[str, str] = Field(default_factory=dict)
    policies: dict[str, str] = Field(default_factory=dict)
    capabilities: tuple[str, ...] = ()
    promotions: tuple[str | SeedPromotion, ...] = ()


def is_seed_shape(data: object) -> bool:
    return isinstance(data, dict) and "price_list" in data


def from_seed(data: dict[str, Any]) -> ConstraintList:
    """The lab's constraint list for a list in the seed's shape; its version is its digest."""
    try:
        seed = SeedList.model_validate(data)
    except ValidationError as error:
        raise error_from_validation(error) from None
    fields: dict[str, Any] = {
        "tenant": seed.tenant or "external",
        "version": seed.version or f"seed_{digest(data)[:12]}",
        "business": seed.business or "the business",
        "services": [
            {"id": p.id, "name": p.service, "price_cents": int(p.price_usd * 100)}
            for p in seed.price_list
        ],
        "hours": _hours(seed.hours),
        "policies": _policies(seed.policies),
        "capabilities": {"can": [_capability(n, i) for n, i in _indexed(seed.capabilities)]},
        "promotions": [_promotion(p, i) for i, p in enumerate(seed.promotions)],
    }
    try:
        return ConstraintList.model_validate(fields)
    except ValidationError as error:
        raise error_from_validation(error) from None


def _indexed(names: tuple[str, ...]) -> list[tuple[str, int]]:
    return [(name, index) for index, name in enumerate(names)]


def _hours(hours: dict[str, str]) -> dict[Weekday, DayHours]:
    converted: dict[Weekday, DayHours] = {}
    for key, value in hours.items():
        path = f"hours.{key}"
        days = _days(key)
        if days is None:
            raise ConstraintListError(path, f"not a day or day range: {key!r}")
        if value.strip().lower() == "closed":
            day_hours: DayHours = "closed"
        elif match := _RANGE.fullmatch(value.strip()):
            opens, closes = (clock.zfill(5) for clock in match.groups())
            try:
                day_hours = OpenHours(opens=opens, closes=closes)
            except ValidationError as error:
                message = error.errors()[0]["msg"].removeprefix("Value error, ")
                raise ConstraintListError(path, message) from None
        else:
            raise ConstraintListError(path, f'expected "HH:MM-HH:MM" or "closed", got {value!r}')
        for day in days:
            if day in converted:
                raise ConstraintListError(path, f"{day} is given hours twice")
            converted[day] = day_hours
    return converted


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


def _policies(policies: dict[str, str]) -> Policies:
    """Typed fields read from the seed's policy codes; anything unread stays as text only."""
    refund = cancellation = reschedule = None
    other: dict[str, str] = {}
    for name, code in policies.items():
        text = code.replace("_", " ")
        lowered = code.lower()
        if name == "refund":
            refund = _refund(text, lowered)
        elif name in ("cancellation", "cancel", "reschedule", "rescheduling"):
            before = _HOURS_BEFORE.search(lowered)
            hours = None
            if before:
                hours = int(before.group(1)) * (24 if before.group(2).startswith("d") else 1)
            policy = ChangePolicy(
                text=text,
                free_until_hours_before=hours if "free" in lowered else None,
                late_fee_cents=None,
            )
            if name.startswith("cancel"):
                cancellation = policy
            else:
                reschedule = policy
        else:
            other[name] = text
    return Policies(refund=refund, cancellation=cancellation, reschedule=reschedule, other=other)


def _refund(text: str, code: str) -> RefundPolicy:
    method: Literal["original_payment", "store_credit"] | None = None
    if "store_credit" in code:
        method = "store_credit"
    elif any(word in code for word in ("money_back", "original_payment", "full_refund")):
        method = "original_payment"
    window = _DAYS_WINDOW.search(code)
    allowed = False if code.startswith("no_refund") else True if method or window else None
    return RefundPolicy(
        text=text,
        allowed=allowed,
        window_days=int(window.group(1)) if window else None,
        method=method,
    )


def _capability(name: str, index: int) -> Capability:
    found = _CAPABILITY_NAMES.get(name.strip().lower())
    if found is None:
        known = ", ".join(sorted(_CAPABILITY_NAMES))
        raise ConstraintListError(f"capabilities[{index}]", f"unknown capability {name!r}: {known}")
    return found


def _promotion(promotion: str | SeedPromotion, index: int) -> Promotion:
    if isinstance(promotion, str):
        percent = _PERCENT.search(promotion)
        return Promotion(
            id=f"promo_{index + 1}",
            description=promotion,
            percent_off=int(percent.group(1)) if percent else None,
        )
    return Promotion(
        id=promotion.id or f"promo_{index + 1}",
        description=promotion.description,
        percent_off=promotion.percent_off,
        price_cents=None if promotion.price_usd is None else int(promotion.price_usd * 100),
        services=(promotion.service,) if promotion.service else (),
    )
