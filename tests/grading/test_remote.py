from __future__ import annotations

import json

import pytest

from lab.facts.loader import load_tenant
from lab.grading.grader import Grader
from lab.grading.remote import RemoteGrader
from lab.grading.schema import GradeRequest, Severity, Verdict

FACTS = load_tenant("demo")
TURN = GradeRequest(utterance="A tune-up is $65.", caller_turn="How much is a tune-up?")


class answering:
    """A chat endpoint that answers every request with content, and keeps what it was sent."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.sent: dict = {}

    def __call__(self, url: str, body: bytes, timeout_s: float) -> bytes:
        self.sent = json.loads(body)
        return json.dumps({"choices": [{"message": {"content": self.content}}]}).encode()


def test_a_well_formed_answer_becomes_the_grade():
    content = json.dumps(
        {
            "verdict": "unsupported",
            "claim": "tune-up price $65",
            "constraint_ref": ["px_basic_tune"],
            "rationale": "The list says $60.",
            "confidence": 0.9,
            "category": "price",
        }
    )
    transport = answering(content)
    grader: Grader = RemoteGrader(url="http://grader.test/v1", model="m", transport=transport)
    grade = grader.grade(TURN, FACTS)
    assert (grade.verdict, grade.severity) == (Verdict.UNSUPPORTED, Severity.CRITICAL)
    assert grade.constraint_ref == ("px_basic_tune",) and grade.grader == "remote:m"
    assert json.loads(transport.sent["messages"][1]["content"])["agent_turn"] == TURN.utterance


@pytest.mark.parametrize(
    "content",
    [
        "not json at all",
        json.dumps({"verdict": "fine", "rationale": "x", "confidence": 0.5}),
        json.dumps({"verdict": "supported", "rationale": "", "confidence": 0.5}),
        json.dumps({"verdict": "supported", "rationale": "ok", "confidence": 7}),
        json.dumps(["supported"]),
    ],
)
def test_an_unparseable_answer_flags_the_turn(content):
    grade = RemoteGrader(url="http://grader.test", model="m", transport=answering(content)).grade(
        TURN, FACTS
    )
    assert grade.verdict is Verdict.LLM_FLAGGED and grade.confidence == 0.0


def test_an_unreachable_grader_flags_the_turn_rather_than_passing_it():
    # Nothing listens on port 9 of the loopback address: the connection is refused at once.
    grade = RemoteGrader(url="http://127.0.0.1:9/v1", model="m", timeout_s=2).grade(TURN, FACTS)
    assert grade.verdict is Verdict.LLM_FLAGGED
    assert grade.rationale == "The remote grader failed (URLError)."
