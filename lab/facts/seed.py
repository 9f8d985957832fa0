"""The constraint-list shape printed in the per-turn grader seed, converted to the lab's own.

Pure. The seed's list has no version, names prices in dollars, hours by day or day range
("mon_fri": "08:00-18:00" or "closed"), policies as short codes and capabilities as a list of
what the agent can do; everything not listed there is something it cannot claim.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from lab.events.chain import digest
from lab.facts.errors import ConstraintListError, error_from_validation
from lab.facts.schema import Capability, ConstraintList, Promotion
from lab.facts.seed_hours import HoursValue, convert_hours
from lab.facts.seed_policies import convert_policies

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
_WRITTEN_PRICE = re.compile(r"\$?\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?")
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
    # Other names callers and agents use ("quick detail" for "basic detail").
    aliases: tuple[str, ...] = Field(
        default=(), validation_alias=AliasChoices("aliases", "also_called", "other_names")
    )

    @field_validator("price_usd", mode="before")
    @classmethod
    def _as_written(cls, value: object) -> object:
        """ "1,250", "$1,250.00": a price as businesses write it; other text is refused as it is."""
        if isinstance(value, str) and _WRITTEN_PRICE.fullmatch(value.strip()):
            return value.strip().lstrip("$").replace(",", "")
        if isinstance(value, str):
            raise ValueError(f'expected a price such as 149, 85.50 or "1,250", got {value!r}')
        return value


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
    # A day or range to "HH:MM-HH:MM", "closed", or a split day (see seed_hours).
    hours: dict[str, HoursValue] = Field(default_factory=dict)
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
            {
                "id": p.id,
                "name": p.service,
                "aliases": p.aliases,
                "price_cents": int(p.price_usd * 100),
            }
            for p in seed.price_list
        ],
        "hours": convert_hours(seed.hours),
        "policies": convert_policies(seed.policies),
        "capabilities": {"can": [_capability(n, i) for n, i in _indexed(seed.capabilities)]},
        "promotions": [_promotion(p, i, seed) for i, p in enumerate(seed.promotions)],
    }
    try:
        return ConstraintList.model_validate(fields)
    except ValidationError as error:
        raise error_from_validation(error, SEED_EXAMPLES) from None


def _indexed(names: tuple[str, ...]) -> list[tuple[str, int]]:
    return [(name, index) for index, name in enumerate(names)]


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
