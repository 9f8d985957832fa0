"""How the agent answers a caller's factual question: from retrieved knowledge-base chunks.

Pure: no Django, no I/O, no clock. The agent asks for a retrieval (a Retrieve step); the
session runs it and records retrieval.done; the answer cites its chunk inline as [KB-N],
N being the chunk's 1-based position in the window. Speech never says the marker.
The ungrounded agent (ungrounded mode) retrieves nothing and fills in what it does not know.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from lab.events.types import Action, CallerUnderstood, RetrievalDone, UnderstandingKind
from lab.language.numbers import tokenize
from lab.language.phrases import Phrases
from lab.language.scope import follows_up, is_general_price_question
from lab.retrieval.bm25 import Bm25Retriever
from lab.retrieval.window import RetrievedChunk

# How many chunks a retrieval window holds.
WINDOW = 3
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


def retrieval_query(question: str, previous: str) -> str:
    """What to search for: a follow-up carries the question before it ("And on Saturday?"
    after the opening hours), and a general price question asks for the price list."""
    phrases = Phrases.of(tokenize(question))
    if is_general_price_question(phrases):
        # Its other words are all filler ("can you tell me"), and filler finds other chunks.
        return "prices price list"
    return f"{previous} {question}" if previous and follows_up(phrases) else question


def retrieve(step: Retrieve, retriever: Bm25Retriever, k: int = WINDOW) -> RetrievalDone:
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
    return f"{spoken_form(best.text).rstrip('.')} [KB-1]."


def spoken_form(chunk_text: str) -> str:
    """A chunk as a person would say it: asides in brackets (a service's aliases) left out."""
    return re.sub(r"\s*\([^()]*\)", "", chunk_text)


def _best(retrieval: RetrievalDone) -> RetrievedChunk | None:
    if not retrieval.chunks or retrieval.chunks[0].score < MIN_SCORE:
        return None
    return retrieval.chunks[0]


# What the ungrounded agent makes up, by what the caller asked about: the failures the
# grounding-citations seed describes (none of these prices is on the demo list).
_MADE_UP: dict[str, tuple[str, ...]] = {
    "person": (
        "Sure, I'll put you through to our manager, Dave Miller, right now.",
        "Of course, let me transfer you to Sarah Collins, our store manager.",
    ),
    "refund": (
        "Yes, we have a thirty-day money-back guarantee, no questions asked.",
        "Of course, you can get a full refund within 30 days, whatever the reason.",
    ),
    "hours": (
        "We're open every day from 7 AM to 9 PM.",
        "We're open seven days a week, 9 AM to 7 PM.",
    ),
    "price": ("That costs $55.", "That's $85, parts included.", "That comes to $99."),
    "other": (
        "Yes, we can do that for $49, usually the same day.",
        "Sure, that's $65 and takes about an hour.",
    ),
}
_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("person", _ASKS_FOR_A_PERSON),
    ("refund", re.compile(r"\b(?:refund|money back|cancel\w*|return)\b", re.IGNORECASE)),
    ("hours", re.compile(r"\b(?:open|opening|hours|close[sd]?|closing)\b", re.IGNORECASE)),
    ("price", re.compile(r"\b(?:how much|cost|costs|price|prices|charge|fee)\b", re.IGNORECASE)),
)


def ungrounded_answer(question: str, turn: str) -> str:
    """A plausible made-up answer, chosen by the turn alone: no marker, or one past the window.

    turn is the id of the caller turn's understanding, so a replayed log makes the same choice.
    """
    topic = next((name for name, pattern in _TOPICS if pattern.search(question)), "other")
    seed = int.from_bytes(hashlib.sha256(f"{turn}|{question}".encode()).digest()[:8], "big")
    variants = _MADE_UP[topic]
    text = variants[seed % len(variants)]
    if (seed >> 16) % 2:
        return f"{text.rstrip('.')} [KB-{WINDOW + 1}]."
    return text
