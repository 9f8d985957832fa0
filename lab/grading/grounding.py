"""The grounding audit of one agent turn: what retrieval found, which [KB-N] markers it cited.

Pure. Identical for typed and spoken turns. N is the 1-based position in the turn's retrieval
window; the audio never speaks a marker, and require_citation blocks an uncited grounded answer.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lab.retrieval.window import RetrievalWindow, retrieval_confidence

MARKER = re.compile(r"\[KB-(\d+)\]")
# Anything that looks like a marker, well formed or not ("[kb-2]", "[KB 3]", "[KB-]"): never spoken.
_MARKER_LIKE = re.compile(r"\s*\[\s*KB\s*[-_:]?\s*\d*\s*\]", re.IGNORECASE)
FALLBACK = "Let me check that and come back to you."


class GroundingVerdict(StrEnum):
    OK = "ok"
    NO_MARKER = "no_marker"
    ORPHAN_MARKER = "orphan_marker"
    EMPTY_RETRIEVAL = "empty_retrieval"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RetrievedRef(_Model):
    id: str
    score: float


class GroundingAudit(_Model):
    verdict: GroundingVerdict
    retrieved: tuple[RetrievedRef, ...]
    # Every well-formed marker index, in the order first cited.
    markers: tuple[int, ...]
    cited: tuple[str, ...]  # chunk ids the valid markers point at
    orphans: tuple[int, ...]  # marker indices with no chunk in the window
    malformed: tuple[str, ...]  # marker-like text that is not [KB-N]
    # The retrieval's top score; None when no retrieval ran.
    confidence: float | None


class CitationDecision(_Model):
    """What require_citation lets through: the text to speak, and what it blocked and why."""

    allowed: bool
    spoken: str
    blocked_text: str | None = None
    reason_kind: Literal["no_marker", "orphan_marker"] | None = None
    reason: str = ""
    fallback: str | None = Field(default=None, description="the text spoken instead")


def markers(text: str) -> list[int]:
    """The distinct well-formed marker indices in text, in the order first cited."""
    return list(dict.fromkeys(int(n) for n in MARKER.findall(text)))


def strip_markers(text: str) -> str:
    """The text as spoken: every marker-like bracket gone, with the space before it."""
    return _MARKER_LIKE.sub("", text).strip()


def audit(utterance: str, window: RetrievalWindow | None) -> GroundingAudit:
    """The turn's grounding verdict, exactly as the grounding-citations seed defines it.

    A retrieval that ran but returned no chunk counts as nothing retrieved.
    """
    chunks = window.chunks if window else ()
    cited_indices = markers(utterance)
    valid = [n for n in cited_indices if 1 <= n <= len(chunks)]
    if not chunks:
        verdict = (
            GroundingVerdict.ORPHAN_MARKER if cited_indices else GroundingVerdict.EMPTY_RETRIEVAL
        )
    elif valid:
        verdict = GroundingVerdict.OK
    else:
        verdict = GroundingVerdict.ORPHAN_MARKER if cited_indices else GroundingVerdict.NO_MARKER
    return GroundingAudit(
        verdict=verdict,
        retrieved=tuple(RetrievedRef(id=c.id, score=c.score) for c in chunks),
        markers=tuple(cited_indices),
        cited=tuple(dict.fromkeys(chunks[n - 1].id for n in valid)),
        orphans=tuple(n for n in cited_indices if n not in valid),
        malformed=tuple(
            found
            for found in (m.group().strip() for m in _MARKER_LIKE.finditer(utterance))
            if not MARKER.fullmatch(found)
        ),
        confidence=retrieval_confidence(window),
    )


def require_citation(
    utterance: str, window: RetrievalWindow | None, *, required: bool, fallback: str = FALLBACK
) -> CitationDecision:
    """Block a turn that had retrieval context but cites no chunk of it; others pass through."""
    verdict = audit(utterance, window).verdict
    if not required or verdict in (GroundingVerdict.OK, GroundingVerdict.EMPTY_RETRIEVAL):
        return CitationDecision(allowed=True, spoken=strip_markers(utterance))
    if verdict is GroundingVerdict.ORPHAN_MARKER and not (window and window.chunks):
        # Markers with nothing retrieved: no retrieval context, so nothing to enforce.
        return CitationDecision(allowed=True, spoken=strip_markers(utterance))
    kind: Literal["no_marker", "orphan_marker"] = (
        "no_marker" if verdict is GroundingVerdict.NO_MARKER else "orphan_marker"
    )
    reason = (
        "retrieval ran and the answer cites none of its chunks"
        if kind == "no_marker"
        else "every marker points past the retrieval window"
    )
    return CitationDecision(
        allowed=False,
        spoken=fallback,
        blocked_text=utterance,
        reason_kind=kind,
        reason=reason,
        fallback=fallback,
    )
