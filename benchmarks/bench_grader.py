"""The per-turn grader on the labelled corpus: accuracy, latency and throughput; BM25 retrieval.

Run with: .venv/bin/python -m benchmarks.bench_grader
"""

from __future__ import annotations

import os
import platform
import re
import sys
import time
from collections import Counter
from pathlib import Path

from lab.facts.knowledge import build_knowledge_base
from lab.facts.loader import load_constraints, load_tenant
from lab.grading.grader import DeterministicGrader
from lab.grading.schema import Verdict
from lab.retrieval.bm25 import Bm25Retriever
from tests.grading.corpus import (
    MOVERS_CORPUS,
    MOVERS_LIST,
    PHYSIO_CORPUS,
    PHYSIO_LIST,
    LabelledTurn,
    load_corpus,
)

TURNS = 100_000
QUERIES = 10_000
# Questions a caller asks, and the chunk a right answer has to stand on.
QUESTIONS = {
    "How much is a consultation?": "kb.price.px_bike_fit",
    "what does a tune up cost": "kb.price.px_basic_tune",
    "How much to fix a flat tire?": "kb.price.px_flat_repair",
    "What do you charge for a full service?": "kb.price.px_full_service",
    "How much is it to true a wheel?": "kb.price.px_wheel_true",
    "Price of a brake bleed?": "kb.price.px_brake_service",
    "Are you open Saturday?": "kb.hours",
    "What time do you close on Friday?": "kb.hours",
    "When do you open in the morning?": "kb.hours",
    "Are you open on Sundays?": "kb.hours",
    "Can I get my money back if I'm not happy?": "kb.policy.refund",
    "What's your refund policy?": "kb.policy.refund",
    "Is there a fee if I cancel?": "kb.policy.cancellation",
    "What happens if I don't show up?": "kb.policy.cancellation",
    "Can I reschedule my appointment?": "kb.policy.reschedule",
    "Can you put me through to your manager?": "kb.capabilities.cannot",
    "Can I speak to a real person?": "kb.capabilities.cannot",
    "Can you look up my account history?": "kb.capabilities.cannot",
    "Do you have any discounts for students?": "kb.promo.promo_student",
    "Do you sell bikes?": "kb.faq.faq_bike_sales",
    "Can I book for Saturday?": "kb.faq.faq_saturday",
    "How do I move my appointment?": "kb.faq.faq_changes",
}


def precision_recall(pairs: list[tuple[Verdict, Verdict]], verdict: Verdict) -> str:
    """Precision and recall of one verdict over (labelled, graded) pairs."""
    true_positive = sum(1 for want, got in pairs if want == got == verdict)
    graded = sum(1 for _, got in pairs if got == verdict)
    labelled = sum(1 for want, _ in pairs if want == verdict)
    precision = true_positive / graded if graded else 1.0
    recall = true_positive / labelled if labelled else 1.0
    return (
        f"P {precision:.3f} R {recall:.3f} ({true_positive}/{graded} graded, {labelled} labelled)"
    )


def accuracy(corpus: list[LabelledTurn]) -> None:
    facts = load_tenant("demo")
    grader = DeterministicGrader()
    for split in ("dev", "holdout", "all"):
        turns = [t for t in corpus if split in ("all", t.split)]
        grades = [grader.grade(turn.request(), facts) for turn in turns]
        pairs = [(turn.verdict, grade.verdict) for turn, grade in zip(turns, grades, strict=True)]
        same = sum(1 for want, got in pairs if want == got)
        categories = sum(
            1
            for t, g in zip(turns, grades, strict=True)
            if (t.verdict, t.category) == (g.verdict, g.category)
        )
        print(f"{split}: {len(turns)} turns, verdict right {same}, with category {categories}")
        for verdict in (Verdict.UNSUPPORTED, Verdict.LLM_FLAGGED):
            print(f"  {verdict.value:<12} {precision_recall(pairs, verdict)}")
        wrong = Counter(f"{want.value}->{got.value}" for want, got in pairs if want != got)
        if wrong:
            print(f"  confusions: {dict(wrong)}")
        contradicted_passed = sum(
            1 for want, got in pairs if want is Verdict.UNSUPPORTED and got is Verdict.SUPPORTED
        )
        print(f"  labelled unsupported graded supported: {contradicted_passed}")


def business(corpus: Path = PHYSIO_CORPUS, listed: Path = PHYSIO_LIST) -> None:
    """A business written after the rules were frozen: the clinic, then the movers (issue 32)."""
    facts = load_constraints(listed)
    grader = DeterministicGrader()
    turns = load_corpus(corpus)
    for form in ("typed", "asr"):
        pairs = []
        for turn in turns:
            heard = (
                turn if form == "typed" else turn.model_copy(update={"text": asr_form(turn.text)})
            )
            pairs.append((turn.verdict, grader.grade(heard.request(), facts).verdict))
        same = sum(1 for want, got in pairs if want == got)
        print(
            f"held-out business {facts.version} ({form}): {len(turns)} turns, verdict right {same}"
        )
        for verdict in (Verdict.UNSUPPORTED, Verdict.LLM_FLAGGED, Verdict.OUT_OF_SCOPE):
            print(f"  {verdict.value:<12} {precision_recall(pairs, verdict)}")
        wrong = Counter(f"{want.value}->{got.value}" for want, got in pairs if want != got)
        print(f"  confusions: {dict(wrong)}")
        contradicted_passed = sum(
            1 for want, got in pairs if want is Verdict.UNSUPPORTED and got is Verdict.SUPPORTED
        )
        print(f"  labelled unsupported graded supported: {contradicted_passed}")


def asr_form(text: str) -> str:
    """The utterance as speech recognition might write it: lowercase, no sentence punctuation."""
    return re.sub(r"[,.!?;](?!\d)", "", text.lower())


def robustness(corpus: list[LabelledTurn]) -> None:
    facts = load_tenant("demo")
    grader = DeterministicGrader()
    pairs = []
    for turn in corpus:
        heard = turn.model_copy(update={"text": asr_form(turn.text)})
        pairs.append((turn.verdict, grader.grade(heard.request(), facts).verdict))
    same = sum(1 for want, got in pairs if want == got)
    print(f"asr form (lowercase, no punctuation): {len(pairs)} turns, verdict right {same}")
    for verdict in (Verdict.UNSUPPORTED, Verdict.LLM_FLAGGED):
        print(f"  {verdict.value:<12} {precision_recall(pairs, verdict)}")
    wrong = Counter(f"{want.value}->{got.value}" for want, got in pairs if want != got)
    print(f"  confusions: {dict(wrong)}")


def percentile(sorted_ns: list[int], q: float) -> float:
    return sorted_ns[round(q * (len(sorted_ns) - 1))] / 1000


def latency(corpus: list[LabelledTurn]) -> None:
    facts = load_tenant("demo")
    grader = DeterministicGrader()
    requests = [turn.request() for turn in corpus]
    for request in requests:  # warm the pattern caches
        grader.grade(request, facts)
    clock = time.perf_counter_ns
    samples: list[int] = []
    started = clock()
    for i in range(TURNS):
        request = requests[i % len(requests)]
        begin = clock()
        grader.grade(request, facts)
        samples.append(clock() - begin)
    wall = (clock() - started) / 1e9
    samples.sort()
    print(
        f"grade: {TURNS} turns in {wall:.1f} s = {TURNS / wall:,.0f} turns/s; "
        f"p50 {percentile(samples, 0.5):.0f} us, p99 {percentile(samples, 0.99):.0f} us, "
        f"max {samples[-1] / 1000:.0f} us"
    )


def retrieval() -> None:
    knowledge = build_knowledge_base(load_tenant("demo"))
    started = time.perf_counter()
    retriever = Bm25Retriever(knowledge)
    built_ms = (time.perf_counter() - started) * 1000
    print(f"retrieval: index of {len(knowledge.chunks)} chunks built in {built_ms:.1f} ms")
    hits = {1: 0, 3: 0}
    for question, expected in QUESTIONS.items():
        ids = [chunk.id for chunk in retriever.retrieve(question, k=3).chunks]
        hits[1] += ids[:1] == [expected]
        hits[3] += expected in ids
    print(f"  recall@1 {hits[1]}/{len(QUESTIONS)}, recall@3 {hits[3]}/{len(QUESTIONS)}")
    queries = list(QUESTIONS)
    clock = time.perf_counter_ns
    samples = []
    for i in range(QUERIES):
        begin = clock()
        retriever.retrieve(queries[i % len(queries)], k=3)
        samples.append(clock() - begin)
    samples.sort()
    print(
        f"  {QUERIES} queries: p50 {percentile(samples, 0.5):.0f} us, "
        f"p99 {percentile(samples, 0.99):.0f} us, max {samples[-1] / 1000:.0f} us"
    )


def main() -> None:
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    print(f"python {platform.python_version()} on {sys.platform}")
    corpus = load_corpus()
    accuracy(corpus)
    business()
    business(MOVERS_CORPUS, MOVERS_LIST)
    robustness(corpus)
    latency(corpus)
    retrieval()


if __name__ == "__main__":
    main()
