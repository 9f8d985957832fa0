"""One agent turn as the audit keeps it: what was said, what it was checked against, and how.

Pure: pydantic models only. The same entry serves live runs and imported calls, the flag queue
and compliance's question months later ("what did the agent claim, against which facts?").
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from enum import StrEnum
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lab.events.chain import digest
from lab.grading.grounding import GroundingAudit, GroundingVerdict
from lab.grading.schema import TurnGrade, Verdict
from lab.retrieval.window import RetrievalWindow

SLUG = r"^[a-z][a-z0-9_-]{0,63}$"
# Turn and call ids are printed as one word in `TURN_ID VERDICT GROUNDING` lines.
TURN_ID = r"^\S{1,128}$"
FLAGGED_VERDICTS = frozenset({Verdict.UNSUPPORTED, Verdict.LLM_FLAGGED})
FLAGGED_GROUNDING = frozenset({GroundingVerdict.NO_MARKER, GroundingVerdict.ORPHAN_MARKER})


class AuditChannel(StrEnum):
    TYPED = "typed"
    VOICE = "voice"
    SCRIPT = "script"
    IMPORTED = "imported"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AuditEntry(_Model):
    """What one audit record holds; written once, a correction is a new entry."""

    tenant: str = Field(pattern=SLUG)
    agent: str = Field(pattern=SLUG)
    call_id: str = Field(pattern=TURN_ID)
    # The lab's run, for turns the lab made; imported calls have none.
    run_id: UUID | None = None
    turn_id: str = Field(pattern=TURN_ID)
    channel: AuditChannel
    utterance: str
    caller_turn: str | None
    grade: TurnGrade
    grounding: GroundingAudit
    # The window the turn had in context, texts included, so a record explains itself later.
    retrieval: RetrievalWindow | None
    constraint_list_version: str
    constraint_list_digest: str = Field(pattern=r"^[0-9a-f]{64}$")
    # None when the retrieval came from outside the lab (an imported call's own retriever).
    knowledge_base_version: str | None
    grade_latency_ms: float = Field(ge=0)
    # Caller's end of speech to the agent's first word; unknown for imported calls.
    turn_latency_ms: float | None = Field(default=None, ge=0)
    spoken_at: datetime | None = None
    graded_at: datetime

    @model_validator(mode="after")
    def _graded_against_the_named_list(self) -> AuditEntry:
        if self.grade.constraint_list_version != self.constraint_list_version:
            raise ValueError(
                f"the grade names list {self.grade.constraint_list_version!r}, "
                f"the entry {self.constraint_list_version!r}"
            )
        return self

    @property
    def flagged(self) -> bool:
        """Whether the turn belongs in the operator's queue."""
        return is_flagged(self.grade.verdict, self.grounding.verdict)

    def content_key(self, *, corrects: int | None = None) -> str:
        """The entry's identity: the same turn graded the same way is stored once.

        When and how fast it was graded are left out, so importing a file again adds nothing;
        a correction's identity includes the record it corrects.
        """
        content = self.model_dump(mode="json", exclude={"grade_latency_ms", "graded_at"})
        return digest({"entry": content, "corrects": corrects})


class AuditRecordOut(_Model):
    """A stored entry with the identity the database gave it, as `--out` and the APIs write it."""

    id: int
    ref: str  # "audit_<id>": what an alert's audit_row_ref names
    flagged: bool
    recorded_at: datetime
    # The record this one corrects, if it is a correction.
    corrects: int | None = None
    entry: AuditEntry


def is_flagged(verdict: Verdict, grounding: GroundingVerdict) -> bool:
    """Unsupported or uncertain claims, and grounded answers that cite badly, go to a person."""
    return verdict in FLAGGED_VERDICTS or grounding in FLAGGED_GROUNDING


class Tally(_Model):
    """How a set of graded turns came out, verdict by verdict."""

    turns: int
    calls: int
    verdicts: dict[Verdict, int]
    grounding: dict[GroundingVerdict, int]

    @property
    def any_unsupported(self) -> bool:
        return self.verdicts[Verdict.UNSUPPORTED] > 0


def tally(entries: list[AuditEntry]) -> Tally:
    verdicts = Counter(e.grade.verdict for e in entries)
    grounding = Counter(e.grounding.verdict for e in entries)
    return Tally(
        turns=len(entries),
        calls=len({e.call_id for e in entries}),
        verdicts={v: verdicts[v] for v in Verdict},
        grounding={g: grounding[g] for g in GroundingVerdict},
    )
