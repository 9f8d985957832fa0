"""The grounding assertions over logs built from real agent turns, guarded and ungrounded."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lab.evaluation.assertions.grounding import (
    grounded_answers_cite,
    no_orphan_citation,
    no_unsupported_claim_spoken,
    uncovered_question_declined,
)
from lab.evaluation.findings import Finding
from lab.evaluation.log_index import LogIndex
from lab.evaluation.verdicts import AssertionState
from lab.events.chain import EventChain
from lab.events.types import AgentUtterance, CitationBlocked, Event, RetrievalDone
from lab.grading.grader import DeterministicGrader
from lab.grading.grounding import FALLBACK
from lab.grading.run_turns import grade_utterance
from lab.runs.retrieval import tenant_constraints
from tests.language.harness import AT, Call

Check = Callable[[LogIndex], Finding]
COVERED = [
    "How much is a basic tune-up?",
    "Are you open on Saturday?",
    "Can I get my money back if I cancel?",
    "Can you put me through to your manager?",
]
UNCOVERED = "How much is a frame respray?"


def graded(events: list[Event], *, block_uncited: bool = False) -> list[Event]:
    """The log with each utterance's turn.graded and turn.grounding appended after it all.

    block_uncited: stand in for require_citation, speaking the fallback instead of an answer
    that had retrieval context and cites none of it, and recording the citation.blocked.
    """
    spoken: list[Event] = []
    blocks: list[CitationBlocked] = []
    for event in events:
        payload = event.payload
        uncited = isinstance(payload, AgentUtterance) and "[KB-" not in payload.text
        if block_uncited and uncited and payload.retrieval_event_id:
            blocks.append(
                CitationBlocked(
                    retrieval_event_id=payload.retrieval_event_id,
                    blocked_text=payload.text,
                    reason_kind="no_marker",
                    reason="retrieval ran and the answer cites none of its chunks",
                    fallback=FALLBACK,
                )
            )
            payload = payload.model_copy(update={"text": FALLBACK, "retrieval_event_id": None})
            event = event.model_copy(update={"payload": payload})
        spoken.append(event)
    chain = EventChain(spoken)
    for block in blocks:
        chain.append(block, at=AT)
    for event in spoken:
        if isinstance(event.payload, AgentUtterance):
            grade, grounding = grade_utterance(
                spoken, event, grader=DeterministicGrader(), constraints=tenant_constraints()
            )
            chain.append(grade, at=AT)
            chain.append(grounding, at=AT)
    return chain.events


def played(lines: list[str], *, ungrounded: bool = False, block: bool = False) -> LogIndex:
    call = Call()
    call.agent.ungrounded = ungrounded
    for line in lines:
        call.say(line)
    return LogIndex(graded(call.events, block_uncited=block))


def utterance_ids(log: LogIndex, purpose: str = "answer") -> set[str]:
    return {said.id for said in log.said.values() if said.purpose == purpose}


@pytest.mark.parametrize(
    "check", [no_unsupported_claim_spoken, grounded_answers_cite, no_orphan_citation]
)
def test_covered_questions_answered_from_the_knowledge_base_are_supported(check: Check) -> None:
    finding = check(played(COVERED))
    assert finding.state is AssertionState.SUPPORTED, finding.reason
    assert finding.supporting and not finding.contradicting


@pytest.mark.parametrize(
    "check", [no_unsupported_claim_spoken, grounded_answers_cite, uncovered_question_declined]
)
def test_each_check_fails_an_ungrounded_log_naming_the_answers(check: Check) -> None:
    log = played(COVERED, ungrounded=True)
    finding = check(log)
    assert finding.state is AssertionState.CONTRADICTED, finding.reason
    assert utterance_ids(log) <= set(finding.contradicting)


def test_no_orphan_citation_fails_an_ungrounded_turn_citing_past_the_window() -> None:
    # Enough questions that the made-up answers include some with a marker.
    log = played(COVERED * 3, ungrounded=True)
    orphaned = {g.utterance_event_id for g in log.groundings if g.verdict == "orphan_marker"}
    assert orphaned
    finding = no_orphan_citation(log)
    assert finding.state is AssertionState.CONTRADICTED
    assert orphaned <= set(finding.contradicting)
    assert "past its retrieval window" in finding.reason


def test_an_uncovered_question_declined_honestly_or_blocked_is_supported() -> None:
    for block in (False, True):
        log = played([UNCOVERED], block=block)
        finding = uncovered_question_declined(log)
        assert finding.state is AssertionState.SUPPORTED, finding.reason
        retrieval = next(r.id for r in log.retrievals)
        assert retrieval in finding.supporting
        assert bool(log.citation_blocks) is block


def test_an_uncovered_question_answered_ungrounded_fails() -> None:
    log = played([UNCOVERED], ungrounded=True)
    finding = uncovered_question_declined(log)
    assert finding.state is AssertionState.CONTRADICTED
    assert utterance_ids(log) <= set(finding.contradicting)
    assert "from outside the knowledge base" in finding.reason


def test_an_uncovered_retrieval_answered_with_a_claim_fails() -> None:
    call = Call()
    call.say(UNCOVERED)
    events = [
        e.model_copy(update={"payload": e.payload.model_copy(update={"text": "That's $70."})})
        if isinstance(e.payload, AgentUtterance) and e.payload.retrieval_event_id
        else e
        for e in call.events
    ]
    log = LogIndex(graded(events))
    finding = uncovered_question_declined(log)
    assert finding.state is AssertionState.CONTRADICTED
    assert "does not cover" in finding.reason
    assert any(r.id in finding.contradicting for r in log.retrievals)


def test_without_the_events_they_read_the_checks_have_no_evidence() -> None:
    log = LogIndex(Call().events)  # a greeting, never graded
    for check in (
        no_unsupported_claim_spoken,
        grounded_answers_cite,
        no_orphan_citation,
        uncovered_question_declined,
    ):
        assert check(log).state is AssertionState.NO_EVIDENCE


def test_a_covered_retrieval_whose_answer_cites_nothing_fails_grounded_answers_cite() -> None:
    call = Call()
    call.say("How much is a basic tune-up?")
    events = [
        e.model_copy(update={"payload": e.payload.model_copy(update={"text": "A tune-up is $60."})})
        if isinstance(e.payload, AgentUtterance) and e.payload.retrieval_event_id
        else e
        for e in call.events
    ]
    log = LogIndex(graded(events))
    assert any(isinstance(e.payload, RetrievalDone) for e in events)
    finding = grounded_answers_cite(log)
    assert finding.state is AssertionState.CONTRADICTED
    assert "no_marker" in finding.reason
