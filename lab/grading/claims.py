"""The kinds of factual claim an agent utterance can make, each with the values it names.

Pure data: lab.grading.extraction finds them, lab.grading.checks checks them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lab.facts.days import Weekday
from lab.facts.schema import Capability
from lab.grading.lexicon import Clock
from lab.grading.named import NamedPolicyClaim
from lab.grading.phrases import PolicyTopic
from lab.grading.schema import Category, Verdict

PolicyFeature = Literal[
    "allowed",
    "refused",
    "window",
    "store_credit",
    "original_payment",
    "unconditional",
    "free",
    "free_anytime",
    "fee",
    "unlisted",
]


@dataclass(frozen=True)
class PriceClaim:
    heard: str
    cents: int
    service: str | None
    approximate: bool
    discounted: bool
    # Every meaning of the words ("eleven fifty": $11.50 or $1,150); the check picks the nearest.
    meanings: tuple[int, ...] = ()
    # A count or a total: (service, how many) whose listed prices the amount must add up to.
    counts: tuple[tuple[str, int], ...] = ()
    # Services sharing a word with the clause when none is named ("quick detail": the details).
    kin: tuple[str, ...] = ()


@dataclass(frozen=True)
class PercentClaim:
    heard: str
    percent: int
    # The clause it was said in and the services it names: who and what the offer is claimed for.
    clause: str = ""
    services: tuple[str, ...] = ()


@dataclass(frozen=True)
class PromoClaim:
    heard: str
    clause: str = ""
    services: tuple[str, ...] = ()


@dataclass(frozen=True)
class HoursClaim:
    heard: str
    days: tuple[Weekday, ...] | None  # None: the utterance names no day
    closed: bool
    opens: Clock | None = None
    closes: Clock | None = None
    within: tuple[Clock, ...] = ()
    always: bool = False
    through: bool = False  # "open straight through": no closing between ranges
    split: bool = False  # "we close for lunch": a closing between ranges


@dataclass(frozen=True)
class PolicyClaim:
    heard: str
    topic: PolicyTopic
    feature: PolicyFeature
    hours: float | None = None
    cents: int | None = None


@dataclass(frozen=True)
class CapabilityClaim:
    heard: str
    capability: Capability
    clause: str = ""  # the whole clause: what is sent, to whom


@dataclass(frozen=True)
class RangeClaim:
    """A price range; consistent when the listed price lies inside it."""

    heard: str
    low: int
    high: int
    service: str | None


@dataclass(frozen=True)
class DiscountClaim:
    """An amount off ("$20 off your first visit"), checked against the promotions."""

    heard: str
    cents: int
    clause: str = ""
    services: tuple[str, ...] = ()


@dataclass(frozen=True)
class AvailabilityClaim:
    heard: str
    day: Weekday | None
    time: Clock | None
    cents: int | None = None
    none_left: bool = False


@dataclass(frozen=True)
class LooseClaim:
    """A claim the list has no field for: out of scope, or a value only a human can attribute."""

    heard: str
    category: Category
    verdict: Verdict
    reason: str


Claim = (
    PriceClaim
    | PercentClaim
    | PromoClaim
    | HoursClaim
    | PolicyClaim
    | CapabilityClaim
    | AvailabilityClaim
    | LooseClaim
    | RangeClaim
    | DiscountClaim
    | NamedPolicyClaim
)


@dataclass(frozen=True)
class Context:
    """What the preceding caller turn and earlier sentences say the agent is talking about."""

    services: tuple[str, ...] = ()
    days: tuple[Weekday, ...] = ()
    asks_hours: bool = False
    asks_price: bool = False
    asks_close: bool = False  # "when do you close?": a bare time answers with the closing time
    # Digit strings the caller said (an order or reference number): identifiers, never prices.
    identifiers: tuple[str, ...] = ()
    topics: tuple[PolicyTopic, ...] = ()
    policy: str | None = None  # the named policy the caller's question names
    # Reading the caller's question (to know what a bare yes or no claims), not an agent's words.
    caller: bool = False
