"""What the APIs answer, as pydantic models the OpenAPI document is generated from (pure).

Rows reuse the audit's own models (TurnGrade, GroundingAudit, RetrievalWindow), so an API row
says exactly what the audit record holds.
"""

from __future__ import annotations

from datetime import date, datetime
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from lab.audit.schema import AuditChannel, AuditRecordOut
from lab.grading.grounding import GroundingAudit, GroundingVerdict
from lab.grading.schema import Category, Severity, TurnGrade, Verdict
from lab.retrieval.window import RetrievalWindow


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _TurnRow(_Model):
    """Which turn a row is about, and when it was spoken, graded and recorded."""

    audit_row_ref: str = Field(description='"audit_<id>", as an alert\'s audit_row_ref names it')
    id: int
    agent: str
    call_id: str
    turn_id: str
    run_id: UUID | None = Field(description="the lab's run; null for imported calls")
    channel: AuditChannel
    utterance: str
    caller_turn: str | None
    flagged: bool
    corrects: int | None = Field(description="the id of the row this one corrects, if any")
    constraint_list_version: str
    knowledge_base_version: str | None
    spoken_at: datetime | None
    graded_at: datetime
    recorded_at: datetime


class GroundingRow(_TurnRow):
    """One agent turn's grounding: what retrieval found (scores), what it cited, the verdict."""

    grounding: GroundingAudit
    retrieval: RetrievalWindow | None = Field(
        description="the window the turn had in context, texts included; null when none ran"
    )


class GraderRow(_TurnRow):
    """One agent turn's grade: verdict, claim, constraint refs, rationale, confidence and more."""

    grade: TurnGrade
    constraint_list_digest: str
    grade_latency_ms: float


class _Page(_Model):
    tenant: str
    agent: str
    limit: int
    next_cursor: str | None = Field(
        description="pass as ?cursor= for the next page; null at the end"
    )


class GroundingPage(_Page):
    items: list[GroundingRow]


class GraderPage(_Page):
    items: list[GraderRow]


def _turn_fields(out: AuditRecordOut) -> dict[str, object]:
    entry = out.entry
    return {
        "audit_row_ref": out.ref,
        "id": out.id,
        "agent": entry.agent,
        "call_id": entry.call_id,
        "turn_id": entry.turn_id,
        "run_id": entry.run_id,
        "channel": entry.channel,
        "utterance": entry.utterance,
        "caller_turn": entry.caller_turn,
        "flagged": out.flagged,
        "corrects": out.corrects,
        "constraint_list_version": entry.constraint_list_version,
        "knowledge_base_version": entry.knowledge_base_version,
        "spoken_at": entry.spoken_at,
        "graded_at": entry.graded_at,
        "recorded_at": out.recorded_at,
    }


def grounding_row(out: AuditRecordOut) -> GroundingRow:
    return GroundingRow.model_validate(
        {**_turn_fields(out), "grounding": out.entry.grounding, "retrieval": out.entry.retrieval}
    )


def grader_row(out: AuditRecordOut) -> GraderRow:
    return GraderRow.model_validate(
        {
            **_turn_fields(out),
            "grade": out.entry.grade,
            "constraint_list_digest": out.entry.constraint_list_digest,
            "grade_latency_ms": out.entry.grade_latency_ms,
        }
    )


class Counts(_Model):
    """How a set of turns came out: flagged, and each grader and grounding verdict."""

    turns: int
    flagged: int
    verdicts: dict[Verdict, int]
    grounding: dict[GroundingVerdict, int]


class AgentCounts(Counts):
    agent: str


class TrendDay(_Model):
    """One UTC day of the trend; days without turns are zeros, never missing."""

    day: date
    turns: int
    flagged: int
    no_marker: int
    orphan_marker: int


class TriageTurn(_Model):
    """A recent flagged turn, for a person to look at first."""

    audit_row_ref: str
    id: int
    agent: str
    call_id: str
    turn_id: str
    verdict: Verdict
    grounding_verdict: GroundingVerdict
    severity: Severity
    category: Category | None
    claim: str | None
    utterance: str
    graded_at: datetime


class Rollup(_Model):
    """A tenant's turns over the last `days` UTC days (through `until`), every agent together."""

    tenant: str
    days: int
    since: date
    until: date
    totals: Counts
    agents: list[AgentCounts]
    trend: list[TrendDay]
    triage: list[TriageTurn] = Field(description="the newest flagged turns, any day, newest first")
    queue_url: str = Field(description="the tenant's operator queue, where flags are acted on")
