"""Ungrounded mode: the same agent without retrieval makes up what it does not know."""

from __future__ import annotations

import pytest

from lab.events.types import AgentUtterance, RetrievalDone
from lab.grading.grader import DeterministicGrader
from lab.grading.grounding import GroundingVerdict, audit, markers
from lab.grading.schema import Category, GradeRequest, Verdict
from lab.runs.retrieval import tenant_constraints
from lab.scripted.answers import WINDOW, ungrounded_answer
from tests.language.harness import Call

QUESTIONS = {
    "How much is a basic tune-up?": Category.PRICE,
    "Are you open on Saturday?": Category.HOURS,
    "Can I get my money back if I cancel?": Category.POLICY,
    "Can you put me through to your manager?": Category.CAPABILITY,
    "How much is a frame respray?": Category.PRICE,
}


def ungrounded_call() -> Call:
    call = Call()
    call.agent.ungrounded = True
    return call


@pytest.mark.parametrize(("question", "category"), QUESTIONS.items())
def test_an_ungrounded_answer_retrieves_nothing_and_the_grader_calls_it_unsupported(
    question: str, category: Category
) -> None:
    call = ungrounded_call()
    said: list[AgentUtterance] = call.say(question)
    assert call.of_type(RetrievalDone) == []
    assert len(said) == 1 and said[0].purpose == "answer" and said[0].retrieval_event_id is None
    grade = DeterministicGrader().grade(
        GradeRequest(utterance=said[0].text, caller_turn=question), tenant_constraints()
    )
    assert (grade.verdict, grade.category) == (Verdict.UNSUPPORTED, category), grade.rationale


def test_the_same_turn_always_makes_up_the_same_answer() -> None:
    first = ungrounded_call().say("Are you open on Saturday?")
    again = ungrounded_call().say("Are you open on Saturday?")
    assert first == again
    assert ungrounded_answer("x", "ev-00007") == ungrounded_answer("x", "ev-00007")


def test_some_turns_carry_no_marker_and_others_one_past_the_retrieval_window() -> None:
    answers = [ungrounded_answer("How much is a brake service?", f"ev-{n:05d}") for n in range(40)]
    cited = [markers(text) for text in answers]
    assert [] in cited
    assert all(found == [WINDOW + 1] for found in cited if found)
    assert any(cited)
    verdicts = {audit(text, None).verdict for text in answers}
    assert verdicts == {GroundingVerdict.EMPTY_RETRIEVAL, GroundingVerdict.ORPHAN_MARKER}


def test_the_guarded_agent_still_answers_from_the_knowledge_base() -> None:
    call = Call()
    said = call.say("Are you open on Saturday?")
    assert len(call.of_type(RetrievalDone)) == 1
    assert said[0].text.endswith("[KB-1].")


def test_run_started_leaves_the_flag_out_while_unset_so_old_logs_hash_alike() -> None:
    started = Call().events[0].payload
    assert "ungrounded" not in started.model_dump(mode="json")
    flagged = started.model_copy(update={"ungrounded": True})
    assert flagged.model_dump(mode="json")["ungrounded"] is True
