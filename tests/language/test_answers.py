from __future__ import annotations

import pytest

from lab.events.types import AgentUtterance, IntentRevised, LookupStarted, RetrievalDone
from lab.grading.grader import DeterministicGrader
from lab.grading.grounding import GroundingVerdict, audit
from lab.grading.schema import GradeRequest, Verdict
from lab.runs.retrieval import tenant_constraints
from lab.scripted import answers
from tests.language.harness import Call


def answered(question: str) -> tuple[RetrievalDone, AgentUtterance]:
    call = Call()
    said = call.say(question)
    retrievals: list[RetrievalDone] = call.of_type(RetrievalDone)
    assert len(retrievals) == 1 and len(said) == 1, question
    return retrievals[0], said[0]


@pytest.mark.parametrize(
    "question",
    [
        "How much is a bike fit consultation?",
        "Are you open Saturday?",
        "Can I get my money back if I cancel?",
        "What's your refund policy?",
    ],
)
def test_a_covered_question_is_answered_from_its_chunk_with_a_marker_the_grader_supports(
    question: str,
) -> None:
    retrieval, said = answered(question)
    assert said.text.endswith("[KB-1].") and said.retrieval_event_id is not None
    assert retrieval.confidence == retrieval.chunks[0].score > answers.MIN_SCORE
    grade = DeterministicGrader().grade(
        GradeRequest(utterance=said.text, caller_turn=question, retrieval=retrieval.window()),
        tenant_constraints(),
    )
    assert grade.verdict is Verdict.SUPPORTED, grade.rationale
    assert audit(said.text, retrieval.window()).verdict is GroundingVerdict.OK


def test_a_person_to_put_through_to_is_declined_from_the_capabilities_chunk() -> None:
    retrieval, said = answered("Can you put me through to your manager?")
    assert retrieval.chunks[0].id == "kb.capabilities.cannot"
    assert said.text == f"{answers.CANNOT} [KB-1]."


def test_a_question_the_knowledge_base_does_not_cover_is_said_to_be_uncovered() -> None:
    retrieval, said = answered("How much is a haircut?")
    assert said.text == answers.NOT_COVERED
    assert audit(said.text, retrieval.window()).verdict is GroundingVerdict.NO_MARKER


def test_turns_without_a_question_run_no_retrieval() -> None:
    call = Call()
    call.say("I'd like Thursday afternoon.")
    assert call.of_type(RetrievalDone) == []


def graded(question: str, retrieval: RetrievalDone, said: AgentUtterance) -> Verdict:
    request = GradeRequest(utterance=said.text, caller_turn=question, retrieval=retrieval.window())
    return DeterministicGrader().grade(request, tenant_constraints()).verdict


@pytest.mark.parametrize(
    "question", ["What are your prices?", "How much do you charge?", "What do things cost?"]
)
def test_a_general_price_question_gets_the_price_list_with_its_marker(question: str) -> None:
    retrieval, said = answered(question)
    assert retrieval.chunks[0].id == "kb.prices" and retrieval.confidence > answers.MIN_SCORE
    assert "price list" in said.text and said.text.endswith("[KB-1].")
    assert graded(question, retrieval, said) is Verdict.SUPPORTED
    assert audit(said.text, retrieval.window()).verdict is GroundingVerdict.OK


def test_a_follow_up_to_the_opening_hours_asks_about_hours_not_for_a_booking() -> None:
    call = Call()
    call.say("What are your opening hours?")
    (said,) = call.say("And on Saturday?")
    retrieval: RetrievalDone = call.of_type(RetrievalDone)[-1]
    assert retrieval.chunks[0].id == "kb.hours" and "Saturday" in said.text
    assert call.of_type(IntentRevised) == [] and call.of_type(LookupStarted) == []


def test_without_a_question_before_it_and_on_saturday_is_a_day_for_the_booking() -> None:
    call = Call()
    call.say("I'd like to book an appointment.")
    call.say("And on Saturday?")
    assert call.of_type(IntentRevised)[-1].args["day"] == "saturday"


def test_a_question_then_a_booking_request_is_a_booking_again() -> None:
    call = Call()
    call.say("What are your opening hours?")
    call.say("Okay, can I book Saturday morning?")
    assert call.of_type(IntentRevised)[-1].args == {"day": "saturday", "part_of_day": "morning"}


def test_the_agent_never_reads_a_services_aliases_aloud() -> None:
    retrieval, said = answered("How much is a brake adjustment?")
    assert "also called" in retrieval.chunks[0].text
    assert said.text == "A brake service costs $40.00 [KB-1]."
    assert graded("How much is a brake adjustment?", retrieval, said) is Verdict.SUPPORTED
    assert audit(said.text, retrieval.window()).verdict is GroundingVerdict.OK


def test_a_price_question_said_as_a_request_is_still_a_price_question() -> None:
    retrieval, said = answered("Can you tell me your prices?")
    assert retrieval.chunks[0].id == "kb.prices" and "price list" in said.text
