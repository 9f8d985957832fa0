"""A second grader behind an OpenAI-compatible chat endpoint, which fails closed.

An edge, not a core: it sends the turn and the constraint list over HTTP. Whatever goes wrong
(unreachable, timed out, an answer that is not the seed's JSON shape) grades the turn
llm_flagged, never supported. The transport is injectable so tests need no network.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lab.facts.schema import ConstraintList
from lab.grading.grader import severity
from lab.grading.schema import Category, ClaimFinding, GradeRequest, TurnGrade, Verdict

Transport = Callable[[str, bytes, float], bytes]
SYSTEM_PROMPT = (
    "You are a factuality grader for a voice-agent utterance. Decide whether the agent made any "
    "factual claim that is not grounded in the tenant's constraint list. Claims about price, "
    "hours, policy, refund, capability or availability must be grounded in it. Filler, hand-offs "
    "and refusals are supported. If you are uncertain, return llm_flagged. Answer with one JSON "
    'object: {"verdict": "supported" | "unsupported" | "out_of_scope" | "llm_flagged", '
    '"claim": string or null, "constraint_ref": [string], "rationale": one sentence, '
    '"confidence": 0.0-1.0, "category": "price" | "hours" | "policy" | "capability" | '
    '"availability" | null}.'
)


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    verdict: Verdict
    claim: str | None = None
    constraint_ref: tuple[str, ...] = ()
    rationale: str = Field(min_length=1)
    confidence: float = Field(ge=0, le=1)
    category: Category | None = None


def post_json(url: str, body: bytes, timeout_s: float) -> bytes:
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        return bytes(response.read())


class RemoteGrader:
    """Grades a turn by asking a chat model; any failure is a flag for a human."""

    version = "1"

    def __init__(
        self,
        *,
        url: str,
        model: str,
        timeout_s: float = 5.0,
        transport: Transport = post_json,
    ) -> None:
        self.url, self.model, self.timeout_s, self.transport = url, model, timeout_s, transport

    @property
    def grader_id(self) -> str:
        return f"remote:{self.model}"

    def grade(self, request: GradeRequest, constraints: ConstraintList) -> TurnGrade:
        try:
            raw = self.transport(self.url, self._body(request, constraints), self.timeout_s)
            content = json.loads(raw)["choices"][0]["message"]["content"]
            answer = _Answer.model_validate_json(content)
        except (OSError, ValueError, KeyError, IndexError, TypeError, ValidationError) as error:
            return self._flagged(constraints, f"The remote grader failed ({type(error).__name__}).")
        findings: tuple[ClaimFinding, ...] = ()
        if answer.claim is not None and answer.category is not None:
            findings = (
                ClaimFinding(
                    claim=answer.claim,
                    category=answer.category,
                    verdict=answer.verdict,
                    constraint_ref=answer.constraint_ref,
                    rationale=answer.rationale,
                    confidence=answer.confidence,
                ),
            )
        return TurnGrade(
            verdict=answer.verdict,
            claim=answer.claim,
            constraint_ref=answer.constraint_ref,
            rationale=answer.rationale,
            confidence=answer.confidence,
            category=answer.category,
            severity=severity(answer.verdict, answer.category),
            grader=self.grader_id,
            grader_version=self.version,
            constraint_list_version=constraints.version,
            claims=findings,
        )

    def _body(self, request: GradeRequest, constraints: ConstraintList) -> bytes:
        user = {
            "constraint_list": constraints.model_dump(mode="json"),
            "caller_turn": request.caller_turn,
            "agent_turn": request.utterance,
        }
        return json.dumps(
            {
                "model": self.model,
                "temperature": 0,
                "messages": [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": json.dumps(user)},
                ],
            }
        ).encode()

    def _flagged(self, constraints: ConstraintList, rationale: str) -> TurnGrade:
        return TurnGrade(
            verdict=Verdict.LLM_FLAGGED,
            claim=None,
            constraint_ref=(),
            rationale=rationale,
            confidence=0.0,
            category=None,
            severity=severity(Verdict.LLM_FLAGGED, None),
            grader=self.grader_id,
            grader_version=self.version,
            constraint_list_version=constraints.version,
        )
