"""Every phrase in the corpus is understood as written down, and none falsely confirms."""

from __future__ import annotations

import pytest

from lab.events.types import Confirmation
from tests.language.phrasebook import STEPS, Entry, confusion, judge, load, load_heldout

ENTRIES = load()


def test_the_corpus_is_large_and_covers_every_step_typed_and_as_whisper_writes() -> None:
    assert len(ENTRIES) >= 400
    for step in STEPS:
        forms = {entry.form for entry in ENTRIES if entry.step == step}
        assert forms == {"typed", "asr"}, step


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda entry: f"{entry.step}:{entry.text}")
def test_each_phrase_means_what_the_corpus_says(entry: Entry) -> None:
    judgement = judge(entry)
    assert judgement.correct, "; ".join(judgement.problems)


def test_nothing_that_is_not_a_confirmation_is_taken_as_one() -> None:
    counts = confusion([judge(entry) for entry in ENTRIES])
    false_yes = sum(n for (want, got), n in counts.items() if got is Confirmation.CONFIRM != want)
    assert false_yes == 0


@pytest.mark.parametrize("name", ["heldout", "heldout_frozen", "heldout_issue32"])
def test_no_held_out_phrase_that_is_not_a_confirmation_is_taken_as_one(name: str) -> None:
    entries = load_heldout(name)
    assert len(entries) >= 80
    counts = confusion([judge(entry) for entry in entries])
    false_yes = sum(n for (want, got), n in counts.items() if got is Confirmation.CONFIRM != want)
    assert false_yes == 0
