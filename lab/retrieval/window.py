"""What one turn's retrieval found: the window of chunks the agent had in context, best first.

Pure. `[KB-N]` in an utterance points at chunks[N - 1] of its turn's window.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RetrievedChunk(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    text: str
    score: float


class RetrievalWindow(BaseModel):
    """A retrieval that ran; a turn without retrieval has no window (None), not an empty one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query: str | None = None
    retriever: str = "external"
    knowledge_base: str | None = None
    chunks: tuple[RetrievedChunk, ...] = ()

    @property
    def confidence(self) -> float:
        """The top score; 0.0 when retrieval ran and matched nothing."""
        return max((chunk.score for chunk in self.chunks), default=0.0)


def retrieval_confidence(window: RetrievalWindow | None) -> float | None:
    """A turn's retrieval confidence: its top score, or None when no retrieval ran (never 0)."""
    return None if window is None else window.confidence
