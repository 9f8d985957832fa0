"""One graded turn as a page shows it, shared by the upload page, the run panel and the queue.

It lives below the web and operator layers so that both can draw a turn without importing each
other.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.audit.models import AuditRecord
from lab.audit.schema import AuditEntry
from lab.grading.schema import Verdict
from lab.retrieval.window import RetrievedChunk

# How a badge reads; its colour comes from the value (static/css/grading.css).
VERDICT_LABELS = {
    Verdict.SUPPORTED: "supported",
    Verdict.UNSUPPORTED: "unsupported",
    Verdict.OUT_OF_SCOPE: "out of scope",
    Verdict.LLM_FLAGGED: "flagged",
}


@dataclass(frozen=True)
class ChunkView:
    number: int  # N of [KB-N]
    chunk: RetrievedChunk
    cited: bool


@dataclass(frozen=True)
class TurnView:
    entry: AuditEntry
    ref: str  # "" for a turn that was not stored
    flagged: bool
    chunks: list[ChunkView]

    @property
    def verdict_label(self) -> str:
        return VERDICT_LABELS[self.entry.grade.verdict]


def turn_view(entry: AuditEntry, record: AuditRecord | None) -> TurnView:
    """One graded turn as the page shows it: every retrieved chunk, the cited ones marked;
    record is None for a turn that was graded and not stored."""
    window = entry.retrieval.chunks if entry.retrieval else ()
    cited = set(entry.grounding.cited)
    return TurnView(
        entry=entry,
        ref=record.ref if record is not None else "",
        flagged=entry.flagged,
        chunks=[
            ChunkView(number=n, chunk=chunk, cited=chunk.id in cited)
            for n, chunk in enumerate(window, start=1)
        ],
    )
