"""Retrieval, blocked citations and each agent turn's grade and grounding audit."""

from __future__ import annotations

from typing import Literal

from lab.events.vocabulary import (
    PayloadModel,
)
from lab.grading.grounding import GroundingAudit
from lab.grading.schema import TurnGrade
from lab.retrieval.window import RetrievalWindow, RetrievedChunk


class RetrievalDone(PayloadModel):
    """The knowledge-base chunks a caller's question retrieved, best first.

    confidence is the top score (0.0 when nothing matched); a turn without this event had no
    retrieval, and its confidence is null.
    """

    type: Literal["retrieval.done"] = "retrieval.done"
    understood_event_id: str
    query: str
    retriever: str
    knowledge_base: str
    chunks: tuple[RetrievedChunk, ...] = ()
    confidence: float

    def window(self) -> RetrievalWindow:
        return RetrievalWindow(
            query=self.query,
            retriever=self.retriever,
            knowledge_base=self.knowledge_base,
            chunks=self.chunks,
        )


class CitationBlocked(PayloadModel):
    """require_citation stopped an answer that had retrieval context but cited none of it."""

    type: Literal["citation.blocked"] = "citation.blocked"
    retrieval_event_id: str
    blocked_text: str
    reason_kind: Literal["no_marker", "orphan_marker"]
    reason: str
    fallback: str


class TurnGraded(PayloadModel):
    """The per-turn grader's verdict on one agent utterance, against a versioned constraint list."""

    type: Literal["turn.graded"] = "turn.graded"
    utterance_event_id: str
    retrieval_event_id: str | None = None
    caller_turn: str | None = None
    grade: TurnGrade


class TurnGrounding(PayloadModel):
    """The grounding audit of one agent utterance: what retrieval found and what it cited."""

    type: Literal["turn.grounding"] = "turn.grounding"
    utterance_event_id: str
    retrieval_event_id: str | None = None
    audit: GroundingAudit


class TurnGradeRecovered(PayloadModel):
    """An utterance graded late: the lab stopped (a crash) after recording it and before its
    grade, and reopening the run graded it from the log exactly as it would have been then.

    Recorded just before the grade events it names, so a reader tells a grade that came late
    from one that changed (a re-grade still compares it like any other).
    """

    type: Literal["turn.grade_recovered"] = "turn.grade_recovered"
    utterance_event_id: str
    missing: tuple[Literal["turn.graded", "turn.grounding"], ...]
    reason: str
