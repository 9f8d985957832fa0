from __future__ import annotations

from collections import Counter

import pytest

from lab.facts.loader import load_tenant
from lab.grading.grader import DeterministicGrader
from lab.grading.schema import Category, Verdict
from tests.grading.corpus import load_corpus

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
