from __future__ import annotations

import pytest

from lab.facts.knowledge import build_knowledge_base
from lab.facts.loader import load_tenant
from lab.retrieval.bm25 import RETRIEVER, Bm25Retriever, terms
from lab.retrieval.window import RetrievalWindow, RetrievedChunk, retrieval_confidence


@pytest.fixture(scope="module")
def retriever() -> Bm25Retriever:
    return Bm25Retriever(build_knowledge_base(load_tenant("demo")))


@pytest.mark.parametrize(
    ("question", "chunk"),
    [
        ("How much is a consultation?", "kb.price.px_bike_fit"),
        ("are you open saturday", "kb.hours"),
        ("Can I get my money back if I cancel?", "kb.policy.refund"),
        ("Can you put me through to your manager?", "kb.capabilities.cannot"),
        ("Do you sell e-bikes?", "kb.faq.faq_bike_sales"),
        ("Is there a student discount?", "kb.promo.promo_student"),
    ],
)
def test_the_question_finds_the_chunk_that_answers_it(retriever, question, chunk):
    window = retriever.retrieve(question, k=3)
    assert window.chunks[0].id == chunk
    assert window.retriever == RETRIEVER and window.knowledge_base == "demo_v1/kb-1"


def test_the_window_is_ranked_best_first_and_at_most_k_long(retriever):
    window = retriever.retrieve("price of a tune-up or a full service", k=2)
    assert len(window.chunks) == 2
    assert window.chunks[0].score >= window.chunks[1].score
    assert window.confidence == window.chunks[0].score > 0


def test_a_question_sharing_no_word_with_the_knowledge_base_retrieves_nothing(retriever):
    window = retriever.retrieve("what's the weather like?")
    assert window.chunks == ()
    assert retrieval_confidence(window) == 0.0


def test_no_retrieval_has_no_confidence_rather_than_zero():
    assert retrieval_confidence(None) is None
    window = RetrievalWindow(chunks=(RetrievedChunk(id="a", text="x", score=2.5),))
    assert retrieval_confidence(window) == 2.5


def test_retrieval_is_deterministic(retriever):
    assert retriever.retrieve("refund policy") == retriever.retrieve("refund policy")


def test_k_must_be_positive(retriever):
    with pytest.raises(ValueError, match="at least 1"):
        retriever.retrieve("hours", k=0)


def test_terms_fold_plurals_and_drop_stopwords():
    assert terms("What are your refunds and Saturdays?") == ["refund", "saturday"]
