"""How the agent answers a caller's factual question: from retrieved knowledge-base chunks.

Pure: no Django, no I/O, no clock. The agent asks for a retrieval (a Retrieve step); the
session runs it and records retrieval.done; the answer cites its chunk inline as [KB-N],
N being the chunk's 1-based position in the window. Speech never says the marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lab.events.types import Action, CallerUnderstood, RetrievalDone, UnderstandingKind
from lab.retrieval.bm25 import Bm25Retriever
from lab.retrieval.window import RetrievedChunk

# Below this BM25 score a chunk only shares a stray word with the question ("how much is a
# haircut?" finding a wheel truing): the knowledge base does not cover it.
MIN_SCORE = 1.0
NOT_COVERED = (
    "The information I have here doesn't cover that, so I won't guess. "
    "I can book appointments and issue refunds."
)
CANNOT = "Sorry, that's not something I can do on this line"
# Out-of-scope asks that the knowledge base answers (what the agent cannot do on the phone).
_ASKS_FOR_A_PERSON = re.compile(
    r"\b(?:transfer|connect|put (?:me )?through|manager|supervisor|speak to|talk to|real person"
    r"|human|representative|operator)\b",
    re.IGNORECASE,
)
# "Can I get my money back if I cancel?": a refund asked about on a condition is a policy question.
_ON_A_CONDITION = re.compile(r"\b(?:if|when|in case) (?:i|we|you)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Retrieve:
    """Ask the session to search the tenant's knowledge base for a caller's question."""

    query: str
    understood_event_id: str


def wants_retrieval(understood: CallerUnderstood, text: str) -> bool:
    """A question about the business, or a request for a person the KB says the agent can't do."""
    if understood.kind is UnderstandingKind.REQUEST and not understood.args:
        return understood.action is Action.REFUND and bool(_ON_A_CONDITION.search(text))
    if understood.kind is UnderstandingKind.QUESTION:
        return understood.cue_kind == "business_fact"
    if understood.kind is UnderstandingKind.UNSUPPORTED:
        return bool(understood.cue and _ASKS_FOR_A_PERSON.search(understood.cue))
    return False


def retrieve(step: Retrieve, retriever: Bm25Retriever, k: int = 3) -> RetrievalDone:
    """Run one retrieval for a step; the same for the live session and headless harnesses."""
    window = retriever.retrieve(step.query, k=k)
    return RetrievalDone(
        understood_event_id=step.understood_event_id,
        query=step.query,
        retriever=window.retriever,
        knowledge_base=window.knowledge_base or retriever.knowledge_base.version,
        chunks=window.chunks,
        confidence=window.confidence,
    )


def grounded_answer(retrieval: RetrievalDone) -> str:
    """The best chunk, said with its marker; an honest "not covered" when nothing fits."""
    best = _best(retrieval)
    if best is None:
        return NOT_COVERED
    if best.id == "kb.capabilities.cannot":
        return f"{CANNOT} [KB-1]."
    return f"{best.text.rstrip('.')} [KB-1]."


def _best(retrieval: RetrievalDone) -> RetrievedChunk | None:
    if not retrieval.chunks or retrieval.chunks[0].score < MIN_SCORE:
        return None
    return retrieval.chunks[0]
