"""The per-turn grader: an interface, and the deterministic grader that is the lab's default.

Pure. A turn's verdict is its worst claim's; a turn whose every clause is a known-safe kind
(filler, a hand-off, "I can't help with that") is supported with no claim; any other clause
that no check covers is a claim of its own, flagged.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from lab.facts.schema import ConstraintList
from lab.grading.checks import check
from lab.grading.extraction import extract
from lab.grading.grounding import strip_markers
from lab.grading.schema import (
    VERDICT_RANK,
    Category,
    ClaimFinding,
    GradeRequest,
    Severity,
    TurnGrade,
    Verdict,
)

DETERMINISTIC_GRADER = "deterministic-grader"
# 2: fail closed (an unchecked statement is flagged, not supported), named policies, free-string
# capabilities, action claims, spoken prices and ranges, amount-off promotions (issue 17).
# 3: clauses that run the call (ending it, "I'm here", what the agent is, how a tool call went)
# are known-safe, so the lab's own fixed lines are no longer flagged (issue 30); lists as
# businesses write them, prices as people say them (meanings, counts, totals), object policies
# field by field, promotions with eligibility, services and dates (issue 32).
DETERMINISTIC_VERSION = "3"


class Grader(Protocol):
    """Anything that grades one agent turn against a constraint list."""

    @property
    def grader_id(self) -> str: ...

    @property
    def version(self) -> str: ...

    def grade(self, request: GradeRequest, constraints: ConstraintList) -> TurnGrade: ...


class DeterministicGrader:
    """Rule-based claim extraction and typed checks; what the tests and the lab rely on."""

    grader_id = DETERMINISTIC_GRADER
    version = DETERMINISTIC_VERSION

    def grade(self, request: GradeRequest, constraints: ConstraintList) -> TurnGrade:
        spoken = strip_markers(request.utterance)
        claims = extract(spoken, request.caller_turn, constraints)
        findings = tuple(
            check(claim, constraints, request.observed, request.on) for claim in claims
        )
        return summarize(findings, grader=self, constraints=constraints)


def severity(verdict: Verdict, category: Category | None) -> Severity:
    """Unsupported claims are critical; a wrong slot only warns, since the gate guards bookings."""
    if verdict is Verdict.UNSUPPORTED:
        return Severity.WARN if category is Category.AVAILABILITY else Severity.CRITICAL
    return Severity.WARN if verdict is Verdict.LLM_FLAGGED else Severity.INFO


def summarize(
    findings: tuple[ClaimFinding, ...], *, grader: Grader, constraints: ConstraintList
) -> TurnGrade:
    """One grade for the turn: the verdict, claims and refs of its worst findings."""
    if not findings:
        return TurnGrade(
            verdict=Verdict.SUPPORTED,
            claim=None,
            constraint_ref=(),
            rationale="The turn makes no factual claim that needs grounding.",
            confidence=0.9,
            category=None,
            severity=Severity.INFO,
            grader=grader.grader_id,
            grader_version=grader.version,
            constraint_list_version=constraints.version,
        )
    worst = max(VERDICT_RANK[f.verdict] for f in findings)
    deciding = [f for f in findings if VERDICT_RANK[f.verdict] == worst]
    # "I can refund $25.00": the amount is the claim to route by, the capability incidental.
    deciding.sort(key=lambda f: f.category is Category.CAPABILITY)
    refs = tuple(dict.fromkeys(ref for f in deciding for ref in f.constraint_ref))
    verdict, category = deciding[0].verdict, deciding[0].category
    return TurnGrade(
        verdict=verdict,
        claim="; ".join(dict.fromkeys(f.claim for f in deciding)),
        constraint_ref=refs,
        rationale=_one_sentence(f.rationale for f in deciding),
        confidence=min(f.confidence for f in deciding),
        category=category,
        severity=severity(verdict, category),
        grader=grader.grader_id,
        grader_version=grader.version,
        constraint_list_version=constraints.version,
        claims=findings,
    )


def _one_sentence(rationales: Iterable[str]) -> str:
    return "; ".join(dict.fromkeys(r.rstrip(".") for r in rationales)) + "."
