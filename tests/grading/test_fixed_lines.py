"""The lab's own fixed lines grade supported; facts said beside the same words still do not."""

from __future__ import annotations

import pytest

from lab.facts.loader import load_tenant
from lab.grading.grader import DeterministicGrader
from lab.grading.schema import GradeRequest, Verdict
from lab.scripted.fixed_lines import fixed_lines

FACTS = load_tenant("demo")
GRADER = DeterministicGrader()
IDLE_GOODBYE = "It sounds like we're done, so I'll end the call here. Goodbye."


def _verdict(text: str) -> Verdict:
    return GRADER.grade(GradeRequest(utterance=text), FACTS).verdict


def test_the_fixed_lines_include_the_idle_goodbye() -> None:
    assert IDLE_GOODBYE in fixed_lines()


@pytest.mark.parametrize("line", fixed_lines())
def test_every_fixed_line_of_the_scripted_agent_grades_supported(line: str) -> None:
    assert _verdict(line) is Verdict.SUPPORTED


@pytest.mark.parametrize(
    "line",
    [
        "I've checked, we're open on Sundays.",
        "I'm here until 6 PM every day.",
        "I'm here, and we offer free towing.",
        "It sounds like we're done, so I'll end the call here and refund you in full.",
        "I've checked: it did not go through, so you'll get a free tune-up.",
        "I'm the lab's automated agent and we guarantee all repairs for life.",
        "Here it is again: a tune-up is $20.",
        "I'll end the call here. We're open 24 hours.",
    ],
)
def test_a_claim_beside_the_call_running_words_is_still_graded(line: str) -> None:
    assert _verdict(line) is not Verdict.SUPPORTED
