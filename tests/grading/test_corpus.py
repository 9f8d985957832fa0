from __future__ import annotations

from collections import Counter

import pytest

from lab.facts.loader import load_constraints, load_tenant
from lab.grading.grader import DeterministicGrader
from lab.grading.schema import Category, Verdict
from tests.grading.corpus import MOVERS_CORPUS, MOVERS_LIST, PHYSIO_CORPUS, PHYSIO_LIST, load_corpus

CORPUS = load_corpus()
FACTS = load_tenant("demo")
GRADER = DeterministicGrader()


def test_the_corpus_covers_every_verdict_and_category():
    assert len(CORPUS) >= 300
    assert len({turn.id for turn in CORPUS}) == len(CORPUS)
    verdicts = Counter(turn.verdict for turn in CORPUS)
    assert set(verdicts) == set(Verdict) and min(verdicts.values()) >= 10
    categories = Counter(turn.category for turn in CORPUS)
    assert set(categories) == {*Category, None} and min(categories.values()) >= 20


@pytest.mark.parametrize("turn", CORPUS, ids=[turn.id for turn in CORPUS])
def test_each_labelled_utterance_gets_its_verdict_and_category(turn):
    grade = GRADER.grade(turn.request(), FACTS)
    assert (grade.verdict, grade.category) == (turn.verdict, turn.category), grade.rationale


PHYSIO = load_corpus(PHYSIO_CORPUS)
PHYSIO_FACTS = load_constraints(PHYSIO_LIST)


def test_the_held_out_business_corpus_is_large_and_labels_every_verdict():
    assert len(PHYSIO) >= 200
    assert len({turn.id for turn in PHYSIO}) == len(PHYSIO)
    assert set(Counter(turn.verdict for turn in PHYSIO)) == set(Verdict)


@pytest.mark.parametrize(
    ("corpus", "facts"), [(CORPUS, FACTS), (PHYSIO, PHYSIO_FACTS)], ids=["demo", "physio"]
)
def test_no_contradicted_claim_is_ever_graded_supported_on_either_corpus(corpus, facts):
    passed = [
        turn.id
        for turn in corpus
        if turn.verdict is Verdict.UNSUPPORTED
        and GRADER.grade(turn.request(), facts).verdict is Verdict.SUPPORTED
    ]
    assert passed == []


def test_the_held_out_business_grades_mostly_as_labelled_and_flags_what_it_cannot_settle():
    grades = [GRADER.grade(turn.request(), PHYSIO_FACTS).verdict for turn in PHYSIO]
    right = sum(grade is turn.verdict for grade, turn in zip(grades, PHYSIO, strict=True))
    assert right >= 0.95 * len(PHYSIO)
    # Where the grader and the label disagree, the grader never passes what the label does not.
    assert all(
        grade is not Verdict.SUPPORTED or turn.verdict in (Verdict.SUPPORTED, Verdict.LLM_FLAGGED)
        for grade, turn in zip(grades, PHYSIO, strict=True)
    )


MOVERS = load_corpus(MOVERS_CORPUS)
MOVERS_FACTS = load_constraints(MOVERS_LIST)


def test_the_third_business_corpus_is_large_and_never_passes_a_contradicted_claim():
    assert len(MOVERS) >= 200
    assert len({turn.id for turn in MOVERS}) == len(MOVERS)
    grades = [GRADER.grade(turn.request(), MOVERS_FACTS).verdict for turn in MOVERS]
    passed = [
        turn.id
        for grade, turn in zip(grades, MOVERS, strict=True)
        if turn.verdict is Verdict.UNSUPPORTED and grade is Verdict.SUPPORTED
    ]
    assert passed == []
    right = sum(grade is turn.verdict for grade, turn in zip(grades, MOVERS, strict=True))
    assert right >= 0.9 * len(MOVERS)
