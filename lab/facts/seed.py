"""The constraint-list shape printed in the per-turn grader seed, converted to the lab's own.

Pure. The seed's list has no version, names prices in dollars, hours by day or day range
("mon_fri": "08:00-18:00" or "closed"), policies as short codes and capabilities as a list of
what the agent can do; everything not listed there is something it cannot claim.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

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
_AMOUNT_OFF = re.compile(r"\$\s*(\d+(?:\.\d\d)?)\s+off\b")
_PROMO = (
    'e.g. "10% off for first-time customers" or {"id": "spring", "description": "Spring '
    'special", "amount_off_usd": 20, "service": "px_basic", "eligibility": "new customers", '
    '"valid_until": "2026-05-31"}'
)
SEED_EXAMPLES = {
    "price_list": '[{"id": "px_basic", "service": "basic detail", "price_usd": 149}]',
    "hours": '{"mon_fri": "08:00-18:00", "sat": "09:00-15:00", "sun": "closed"}',
    "policies": '{"refund": "store_credit_only", "deposit": "20_pct_due_at_booking"}',
    "capabilities": '["book_appointment", "answer_pricing", "send_sms_reminders"]',
    "promotions": _PROMO.removeprefix("e.g. "),
    "tenant": '"acme-plumbing"',
    "version": '"acme_v1"',
    "business": '"Acme Plumbing"',
}


class SeedPrice(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    service: str = Field(min_length=1)
    price_usd: Decimal = Field(ge=0, decimal_places=2)


class SeedPromotion(BaseModel):
    """A promotion object; the names a business is likely to write are all accepted."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    id: str | None = None
    description: str | None = Field(
        default=None, min_length=1, validation_alias=AliasChoices("description", "name", "title")
    )
    percent_off: int | None = Field(
        default=None,
        ge=1,
        le=100,
        validation_alias=AliasChoices("percent_off", "discount_percent", "discount_pct"),
    )
    amount_off_usd: Decimal | None = Field(
        default=None,
        gt=0,
        decimal_places=2,
        validation_alias=AliasChoices("amount_off_usd", "discount_usd", "discount_amount_usd"),
    )
    price_usd: Decimal | None = Field(default=None, ge=0, decimal_places=2)
    service: str | None = None
    services: tuple[str, ...] = ()
    eligibility: str | None = None
    valid_from: str | None = None
    valid_until: str | None = Field(
        default=None, validation_alias=AliasChoices("valid_until", "valid_to", "expires")
    )
    keywords: tuple[str, ...] = ()


class SeedList(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tenant: str | None = None
    version: str | None = None
    business: str | None = None
    price_list: tuple[SeedPrice, ...] = Field(min_length=1)
    hours: dict[str, str] = Field(default_factory=dict)
    # Any named policy: a short code ("deposit_20_pct_due_at_booking") or a sentence.
    policies: dict[str, str | dict[str, Any]] = Field(default_factory=dict)
    capabilities: tuple[str, ...] = ()
    # Read one by one (see _promotion), so an object in an unexpected shape names its own field.
    promotions: tuple[Any, ...] = ()


def is_seed_shape(data: object) -> bool:
    return isinstance(data, dict) and "price_list" in data


def from_seed(data: dict[str, Any]) -> ConstraintList:
    """The lab's constraint list for a list in the seed's shape; its version is its digest."""
    try:
        seed = SeedList.model_validate(data)
    except ValidationError as error:
        raise error_from_validation(error, SEED_EXAMPLES) from None
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
        "promotions": [_promotion(p, i, seed) for i, p in enumerate(seed.promotions)],
    }
    try:
        return ConstraintList.model_validate(fields)
    except ValidationError as error:
        raise error_from_validation(error, SEED_EXAMPLES) from None


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


def _policy_text(name: str, value: str | dict[str, Any]) -> str:
    """A policy as one code or sentence; an object's fields are read as words."""
    if isinstance(value, str):
        if not value.strip():
            raise ConstraintListError(
                f"policies.{name}", 'expected the policy as text, e.g. "20_pct_due_at_booking"'
            )
        return value
    if isinstance(value.get("text"), str) and value["text"].strip():
        return str(value["text"])
    return "; ".join(f"{key} {item}" for key, item in value.items())


def _policies(policies: dict[str, str | dict[str, Any]]) -> Policies:
    """Typed fields read from the seed's policy codes; anything unread stays as text only."""
    refund = cancellation = reschedule = None
    other: dict[str, str] = {}
    for raw_name, value in policies.items():
        name = re.sub(r"[\s-]+", "_", raw_name.strip().lower())
        code = _policy_text(name, value)
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


def _capability(name: str, index: int) -> str:
    """A capability by the name the business wrote; known synonyms become the lab's own name."""
    key = re.sub(r"[\s-]+", "_", name.strip().lower())
    if not key:
        raise ConstraintListError(
            f"capabilities[{index}]",
            'expected a capability name, got an empty string; e.g. "book_appointment"',
        )
    found = _CAPABILITY_NAMES.get(key)
    return found.value if found else key


def _promotion(promotion: object, index: int, seed: SeedList) -> Promotion:
    path = f"promotions[{index}]"
    if isinstance(promotion, str):
        if not promotion.strip():
            raise ConstraintListError(
                path, f"expected a description, got an empty string; {_PROMO}"
            )
        percent = _PERCENT.search(promotion)
        off = _AMOUNT_OFF.search(promotion)
        return Promotion(
            id=f"promo_{index + 1}",
            description=promotion,
            percent_off=int(percent.group(1)) if percent else None,
            amount_off_cents=int(Decimal(off.group(1)) * 100) if off else None,
        )
    if not isinstance(promotion, dict):
        got = type(promotion).__name__
        raise ConstraintListError(path, f"expected a string or an object, got {got}; {_PROMO}")
    try:
        found = SeedPromotion.model_validate(promotion)
    except ValidationError as error:
        first = error.errors()[0]
        where = path + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConstraintListError(where, f"{message}; {_PROMO}") from None
    services = (*((found.service,) if found.service else ()), *found.services)
    names = {p.id: p.id for p in seed.price_list} | {
        p.service.lower(): p.id for p in seed.price_list
    }
    unknown = [name for name in services if name.lower() not in names and name not in names]
    if unknown:
        known = ", ".join(p.id for p in seed.price_list)
        raise ConstraintListError(
            f"{path}.service",
            f"names no service on the price list: {unknown}; expected one of {known}",
        )
    if not (found.description or found.percent_off or found.amount_off_usd or found.price_usd):
        raise ConstraintListError(
            path, f"expected a description or a discount (percent_off, amount_off_usd); {_PROMO}"
        )
    description = found.description or _describe(found)
    return Promotion(
        id=_promotion_id(found.id, index),
        description=description,
        percent_off=found.percent_off,
        amount_off_cents=None if found.amount_off_usd is None else int(found.amount_off_usd * 100),
        price_cents=None if found.price_usd is None else int(found.price_usd * 100),
        services=tuple(dict.fromkeys(names.get(n.lower(), n) for n in services)),
        keywords=found.keywords,
        eligibility=found.eligibility,
        valid_from=found.valid_from,
        valid_until=found.valid_until,
    )


def _promotion_id(given: str | None, index: int) -> str:
    cleaned = re.sub(r"[^a-z0-9_]+", "_", (given or "").strip().lower()).strip("_")
    return cleaned if re.match(r"^[a-z]", cleaned) else f"promo_{index + 1}"


def _describe(found: SeedPromotion) -> str:
    off = f"{found.percent_off}% off" if found.percent_off else f"${found.amount_off_usd} off"
    if found.price_usd is not None and not (found.percent_off or found.amount_off_usd):
        off = f"a price of ${found.price_usd}"
    who = f" for {found.eligibility}" if found.eligibility else ""
    return f"{off}{who}"
