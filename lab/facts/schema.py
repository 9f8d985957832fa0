"""A tenant's versioned factual constraint list: what the agent may claim about the business.

Pure: no Django, no I/O. A new list is a new version; its identity is the digest of its
canonical JSON, so a grade can always name exactly the facts it was checked against.
"""

from __future__ import annotations

import re
from enum import StrEnum
from itertools import pairwise
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from lab.events.chain import digest
from lab.facts.days import Weekday

_CLOCK = re.compile(r"([01]\d|2[0-3]):[0-5]\d|24:00")


class Capability(StrEnum):
    """What an agent can be asked to do; the grader recognises promises of each by its words."""

    BOOK_APPOINTMENT = "book_appointment"
    RESCHEDULE_APPOINTMENT = "reschedule_appointment"
    CANCEL_APPOINTMENT = "cancel_appointment"
    REFUND_ORDER = "refund_order"
    ANSWER_PRICING = "answer_pricing"
    ANSWER_HOURS = "answer_hours"
    ANSWER_POLICY = "answer_policy"
    TAKE_MESSAGE = "take_message"
    TRANSFER_CALL = "transfer_call"
    TRANSFER_TO_NAMED_PERSON = "transfer_to_named_person"
    LOOKUP_ORDER_STATUS = "lookup_order_status"
    ACCESS_EXTERNAL_RECORDS = "access_external_records"
    TAKE_PAYMENT = "take_payment"
    SEND_CONFIRMATION = "send_confirmation"


class _Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Service(_Fact):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    name: str = Field(min_length=1)
    # Other names callers and agents use for it ("tune-up" for "basic tune-up").
    aliases: tuple[str, ...] = ()
    price_cents: int = Field(ge=0)


class OpenHours(_Fact):
    opens: str
    closes: str

    @field_validator("opens", "closes")
    @classmethod
    def _is_clock(cls, value: str) -> str:
        if not _CLOCK.fullmatch(value):
            raise ValueError(f"expected a 24-hour time HH:MM, got {value!r}")
        return value

    @model_validator(mode="after")
    def _opens_before_closing(self) -> OpenHours:
        if self.opens >= self.closes:
            raise ValueError(f"opens at {self.opens} but closes at {self.closes}")
        return self

    def minutes(self) -> tuple[int, int]:
        """Opening and closing time as minutes after midnight."""
        return _minutes(self.opens), _minutes(self.closes)


def _in_order(ranges: tuple[OpenHours, ...]) -> tuple[OpenHours, ...]:
    for before, after in pairwise(ranges):
        if after.opens < before.closes:
            raise ValueError(
                f"ranges must be in order and apart: {before.opens}-{before.closes} "
                f"then {after.opens}-{after.closes}"
            )
    return ranges


# A split day ("08:00-12:00, 14:00-17:00"): open ranges in order, closed between them.
SplitDay = Annotated[tuple[OpenHours, ...], Field(min_length=2), AfterValidator(_in_order)]
DayHours = OpenHours | SplitDay | Literal["closed"]


def open_ranges(hours: DayHours) -> tuple[tuple[int, int], ...]:
    """A day's open ranges as minutes after midnight; none when it is closed."""
    if isinstance(hours, OpenHours):
        return (hours.minutes(),)
    if isinstance(hours, tuple):
        return tuple(part.minutes() for part in hours)
    return ()


class RefundPolicy(_Fact):
    text: str = Field(min_length=1)
    allowed: bool | None = None
    window_days: int | None = Field(default=None, ge=0)
    method: Literal["original_payment", "store_credit"] | None = None
    # What a refund depends on ("a workmanship fault"); None when the list does not say.
    conditions: str | None = None


class ChangePolicy(_Fact):
    """Cancelling or rescheduling: free until some hours before, a fee after that."""

    text: str = Field(min_length=1)
    free_until_hours_before: int | None = Field(default=None, ge=0)
    late_fee_cents: int | None = Field(default=None, ge=0)


class Policies(_Fact):
    refund: RefundPolicy | None = None
    cancellation: ChangePolicy | None = None
    reschedule: ChangePolicy | None = None
    # Policies the grader has no typed fields for: claims about them can only be flagged.
    other: dict[str, str] = Field(default_factory=dict)


# Any name a business writes ("send_sms_reminders"); the Capability values are those the grader
# knows the words of, and a free name is matched to a claim by the words of its name.
CapabilityName = Annotated[str, Field(min_length=1, max_length=80)]


class Capabilities(_Fact):
    can: tuple[CapabilityName, ...] = ()
    cannot: tuple[CapabilityName, ...] = ()

    @model_validator(mode="after")
    def _disjoint(self) -> Capabilities:
        both = set(self.can) & set(self.cannot)
        if both:
            raise ValueError(f"listed as both can and cannot: {sorted(both)}")
        return self


class Promotion(_Fact):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(min_length=1)
    percent_off: int | None = Field(default=None, ge=1, le=100)
    price_cents: int | None = Field(default=None, ge=0)
    # Service ids it applies to; empty means every service.
    services: tuple[str, ...] = ()
    # Words that name it when an agent mentions it without a figure ("the student discount").
    keywords: tuple[str, ...] = ()
    amount_off_cents: int | None = Field(default=None, ge=1)
    # Who qualifies ("first-time customers") and the dates it runs, as the business wrote them.
    eligibility: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None


class FaqEntry(_Fact):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)


class ConstraintList(_Fact):
    tenant: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    version: str = Field(pattern=r"^[a-z][a-z0-9_-]*_v\d+$|^seed_[0-9a-f]{12}$")
    business: str = Field(min_length=1)
    currency: Literal["USD"] = "USD"
    services: tuple[Service, ...] = Field(min_length=1)
    # A day left out is a day the list says nothing about, which is not the same as closed.
    hours: dict[Weekday, DayHours] = Field(default_factory=dict)
    policies: Policies = Field(default_factory=Policies)
    capabilities: Capabilities = Field(default_factory=Capabilities)
    promotions: tuple[Promotion, ...] = ()
    faq: tuple[FaqEntry, ...] = ()

    @model_validator(mode="after")
    def _ids_are_unique_and_resolve(self) -> ConstraintList:
        ids = [s.id for s in self.services] + [p.id for p in self.promotions]
        ids += [f.id for f in self.faq]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"duplicate ids: {duplicates}")
        known = {s.id for s in self.services}
        for promotion in self.promotions:
            unknown = sorted(set(promotion.services) - known)
            if unknown:
                raise ValueError(f"promotion {promotion.id} names unknown services {unknown}")
        return self

    def digest(self) -> str:
        """SHA-256 of the list's canonical JSON: the identity a grade records beside the version."""
        dumped = self.model_dump(mode="json")
        # Promotion fields added later are left out while unset, so older lists keep their digest.
        for promotion in dumped["promotions"]:
            for name in _LATER_PROMOTION_FIELDS:
                if promotion.get(name) is None:
                    promotion.pop(name, None)
        return digest(dumped)

    def service(self, service_id: str) -> Service:
        return next(s for s in self.services if s.id == service_id)


_LATER_PROMOTION_FIELDS = ("amount_off_cents", "eligibility", "valid_from", "valid_until")


def _minutes(clock: str) -> int:
    hours, minutes = clock.split(":")
    return int(hours) * 60 + int(minutes)


def format_clock(minutes: int) -> str:
    """A time of day as it is said: 510 is "8:30 AM", 720 is "12:00 PM"."""
    hour, minute = divmod(minutes % (24 * 60), 60)
    return f"{(hour - 1) % 12 + 1}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def format_cents(cents: int) -> str:
    """An amount as written: "$60.00"."""
    return f"${cents // 100:,}.{cents % 100:02d}"
