"""What the evaluator concludes about a run: one state per assertion and an overall verdict.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from lab.scenarios.contracts import AssertionKind


class Verdict(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"


class AssertionState(StrEnum):
    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    NO_EVIDENCE = "no_evidence"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AssertionResult(_Strict):
    """One contract assertion judged against the log, with the event ids on each side."""

    id: str
    kind: AssertionKind
    description: str
    state: AssertionState
    supporting: list[str]
    contradicting: list[str]
    reason: str


ReasonKind = Literal[
    "all_supported",
    "contradicted",
    "missing_event",
    "run_incomplete",
    "run_abandoned",
    "agent_fault",
    "evaluator_error",
]


class Evaluation(_Strict):
    evaluator_version: str
    contract_id: str
    contract_version: int
    verdict: Verdict
    reason_kind: ReasonKind
    reason: str
    assertions: list[AssertionResult]
