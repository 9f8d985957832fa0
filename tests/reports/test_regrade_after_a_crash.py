"""A run the lab stopped between an utterance and its grade reads incomplete, not changed."""

from __future__ import annotations

import pytest

from lab.events.chain import EventChain
from lab.events.types import Event, RunEnded, TurnGradeRecovered
from lab.grading.schema import Verdict
from lab.reports.services import report_verify
from lab.reports.verification import Check, Status
from tests.reports.graded_call import AT, WRONG_ANSWER, graded_call
from tests.reports.test_regrade import _report_of

pytestmark = pytest.mark.django_db


def rechained(payloads) -> list[Event]:
    chain = EventChain()
    for payload in payloads:
        chain.append(payload, at=AT)
    return chain.events


def call(*, kept: set[str], ended: bool, recovered: bool = False) -> list[Event]:
    """The graded call with only the kept kinds of grade event, ended or cut off."""
    payloads = []
    for event in graded_call(WRONG_ANSWER):
        if event.type in ("turn.graded", "turn.grounding"):
            if event.type not in kept:
                continue
            if recovered and event.type == "turn.graded":
                utterance = event.payload.utterance_event_id
                payloads.append(
                    TurnGradeRecovered(
                        utterance_event_id=utterance,
                        missing=("turn.graded", "turn.grounding"),
                        reason="the lab stopped before the grade",
                    )
                )
        if isinstance(event.payload, RunEnded) and not ended:
            continue
        payloads.append(event.payload)
    return rechained(payloads)


@pytest.mark.parametrize("kept", [set(), {"turn.graded"}])
def test_a_log_cut_off_before_its_last_grade_is_incomplete_and_consistent(kept):
    verification = report_verify(_report_of(call(kept=kept, ended=False)))
    assert verification.consistent, verification.problems()
    result = verification.check(Check.REGRADE)
    assert result.status is Status.NOTICE
    assert [f.kind for f in result.findings] == ["grade_incomplete"]
    assert verification.incomplete and verification.regrade.mismatched == 0
    line = verification.summary("r.json")
    assert "INCONSISTENT" not in line and "incomplete: the run stopped" in line


def test_a_missing_grade_in_a_log_that_ended_is_still_a_change():
    verification = report_verify(_report_of(call(kept=set(), ended=True)))
    assert not verification.consistent and not verification.incomplete
    assert "INCONSISTENT (re-grade:" in verification.summary("r.json")


def test_a_grade_recorded_late_is_named_recovered_and_compared_like_any_other():
    events = call(kept={"turn.graded", "turn.grounding"}, ended=True, recovered=True)
    verification = report_verify(_report_of(events))
    assert verification.consistent, verification.problems()
    kinds = [f.kind for f in verification.check(Check.REGRADE).findings]
    assert kinds == ["grade_recovered"]
    # The same late grade, rewritten: a change, whatever the note says.
    forged = []
    for event in events:
        payload = event.payload
        if event.type == "turn.graded":
            grade = payload.grade.model_copy(update={"verdict": Verdict.SUPPORTED})
            payload = payload.model_copy(update={"grade": grade})
        forged.append(payload)
    verification = report_verify(_report_of(rechained(forged)))
    assert not verification.consistent
    assert "grade_differs" in [f.kind for f in verification.check(Check.REGRADE).findings]
