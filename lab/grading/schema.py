"""What a per-turn grade reads and what it says, in the shape of the per-turn grader seed.

Pure: pydantic models only. A grade names the constraint-list version it was checked against,
so a flag from May is read against May's list.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from lab.facts.days import Weekday
from lab.retrieval.window import RetrievalWindow


class Verdict(StrEnum):
    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    OUT_OF_SCOPE = "out_of_scope"
    LLM_FLAGGED = "llm_flagged"


class Category(StrEnum):
    PRICE = "price"
    HOURS = "hours"
    POLICY = "policy"
    CAPABILITY = "capability"
    AVAILABILITY = "availability"


class Severity(StrEnum):
    INFO = "info"
    WARN = "warn"
    CRITICAL = "critical"


# The worst verdict among a turn's claims decides the turn; a flag outranks a gap in the list.
VERDICT_RANK = {
    Verdict.SUPPORTED: 0,
    Verdict.OUT_OF_SCOPE: 1,
    Verdict.LLM_FLAGGED: 2,
    Verdict.UNSUPPORTED: 3,
}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Slot(_Model):
    day: Weekday
    time: str = Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")


class Observed(_Model):
    """Values the call's own events established (lookup options, proposals, receipts).

    Slots and refundable amounts are facts about this call, not about the business, so the
    constraint list cannot ground them; only what the tools actually returned can.
    """

    slots: tuple[Slot, ...] = ()
    amounts_cents: tuple[int, ...] = ()
    # A lookup in this call came back with no options, so "nothing is free" has evidence.
    empty_lookup: bool = False


class GradeRequest(_Model):
    utterance: str
    caller_turn: str | None = None
    retrieval: RetrievalWindow | None = None
    observed: Observed = Field(default_factory=Observed)
    # The day the turn was spoken, where known: a promotion is checked against its dates then.
    on: date | None = None


class ClaimFinding(_Model):
    """One factual claim found in the utterance and what checking it against the list showed."""

    claim: str
    category: Category
    verdict: Verdict
    constraint_ref: tuple[str, ...]
    rationale: str
    confidence: float = Field(ge=0, le=1)


class TurnGrade(_Model):
    """The seed's grader output for one turn, decided by its worst claims, plus every claim."""

    verdict: Verdict
    claim: str | None
    constraint_ref: tuple[str, ...]
    rationale: str
    confidence: float = Field(ge=0, le=1)
    # None only when the turn makes no factual claim (filler, a hand-off, a refusal).
    category: Category | None
    severity: Severity
    grader: str
    grader_version: str
    constraint_list_version: str
    claims: tuple[ClaimFinding, ...] = ()
