"""Lexical BM25 retrieval over a knowledge base's chunks (Okapi BM25 from rank-bm25).

Pure and deterministic: the index is built once from the chunks; a query reads no clock.
"""

from __future__ import annotations

import re
from importlib.metadata import version

from rank_bm25 import BM25Okapi

from lab.facts.knowledge import KnowledgeBase
from lab.retrieval.window import RetrievalWindow, RetrievedChunk

RETRIEVER = f"bm25-okapi/rank-bm25-{version('rank-bm25')}"
_WORD = re.compile(r"[a-z0-9]+")
# Words that say nothing about which chunk a question is after.
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "get",
        "have",
        "how",
        "i",
        "if",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "that",
        "the",
        "this",
        "to",
        "we",
        "what",
        "when",
        "will",
        "with",
        "you",
        "your",
    ]
)


def terms(text: str) -> list[str]:
    """Lowercase search terms, stopwords dropped and plurals folded ("refunds" is "refund")."""
    found = []
    for word in _WORD.findall(text.lower().replace("'", "")):
        if word in _STOP:
            continue
        if len(word) > 4 and word.endswith("ies"):
            word = word[:-3] + "y"
        elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    return found


class Bm25Retriever:
    """Ranks a knowledge base's chunks for a query; only chunks sharing a term are returned."""

    def __init__(self, knowledge_base: KnowledgeBase) -> None:
        self.knowledge_base = knowledge_base
        self._chunks = knowledge_base.chunks
        self._index = BM25Okapi([terms(f"{c.text} {c.terms}") for c in self._chunks])

    def retrieve(self, query: str, k: int = 3) -> RetrievalWindow:
        """The k best chunks for query with their scores, best first (ties in chunk order)."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        words = terms(query)
        scores = self._index.get_scores(words) if words else []
        ranked = sorted(
            (index for index, score in enumerate(scores) if score > 0),
            key=lambda index: -scores[index],
        )[:k]
        return RetrievalWindow(
            query=query,
            retriever=RETRIEVER,
            knowledge_base=self.knowledge_base.version,
            chunks=tuple(
                RetrievedChunk(
                    id=self._chunks[i].id,
                    text=self._chunks[i].text,
                    score=round(float(scores[i]), 4),
                )
                for i in ranked
            ),
        )
