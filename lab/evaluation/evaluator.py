"""The evaluator: a pure function of (contract, ordered events) that never raises.

One pass (log_index.py) copies what the checks read into small records and indexes them; each
assertion family (assertions/*.py) then checks those indexes alone, and this registry maps each
assertion kind to its check. Pure: no Django, no I/O, no clock. It runs identically on a live,
partial log and on an imported one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lab.evaluation.assertions.confirmation import (
    awaits_confirmation,
    commit_confirmed_explicitly,
    positive_talk_not_confirmation,
)
from lab.evaluation.assertions.execution import (
    commit_outcome_recorded,
    one_commit_per_confirmation,
    single_execution,
)
from lab.evaluation.assertions.grounding import (
    grounded_answers_cite,
    no_orphan_citation,
    no_unsupported_claim_spoken,
    uncovered_question_declined,
)
from lab.evaluation.assertions.interruption import (
    interruption_expires_proposal,
    readback_heard_out,
)
from lab.evaluation.assertions.lookups import (
    lookup_failure_recorded,
    no_invented_result,
    read_retried_at_most_once,
)
from lab.evaluation.assertions.revisions import (
    commit_uses_latest_revision,
    latest_request_executed,
    superseded_proposal_expired,
)
from lab.evaluation.findings import Finding
from lab.evaluation.log_index import LogIndex
from lab.evaluation.records import End, Fault
from lab.evaluation.verdicts import (
    AssertionResult,
    AssertionState,
    Evaluation,
    ReasonKind,
    Verdict,
)
from lab.events.types import Event
from lab.scenarios.contracts import Assertion, AssertionKind, Contract

# 2: attempted commits are judged (accepted or not), an execution counts from its attempt's
# start, and a log that ends with a write's outcome unknown fails `commit_outcome_recorded`.
EVALUATOR_VERSION = "evaluator-2"
# How many event ids a verdict reason names before it only counts the rest.
_IDS_IN_REASON = 6


_CHECKS: dict[AssertionKind, Callable[[LogIndex], Finding]] = {
    AssertionKind.SUPERSEDED_PROPOSAL_EXPIRED: superseded_proposal_expired,
    AssertionKind.COMMIT_USES_LATEST_REVISION: commit_uses_latest_revision,
    AssertionKind.COMMIT_CONFIRMED_EXPLICITLY: commit_confirmed_explicitly,
    AssertionKind.AWAITS_CONFIRMATION: awaits_confirmation,
    AssertionKind.POSITIVE_TALK_NOT_CONFIRMATION: positive_talk_not_confirmation,
    AssertionKind.LOOKUP_FAILURE_RECORDED: lookup_failure_recorded,
    AssertionKind.READ_RETRIED_AT_MOST_ONCE: read_retried_at_most_once,
    AssertionKind.NO_INVENTED_RESULT: no_invented_result,
    AssertionKind.INTERRUPTION_EXPIRES_PROPOSAL: interruption_expires_proposal,
    AssertionKind.READBACK_HEARD_OUT: readback_heard_out,
    AssertionKind.SINGLE_EXECUTION: single_execution,
    AssertionKind.COMMIT_OUTCOME_RECORDED: commit_outcome_recorded,
    AssertionKind.ONE_COMMIT_PER_CONFIRMATION: one_commit_per_confirmation,
    AssertionKind.NO_UNSUPPORTED_CLAIM_SPOKEN: no_unsupported_claim_spoken,
    AssertionKind.GROUNDED_ANSWERS_CITE: grounded_answers_cite,
    AssertionKind.NO_ORPHAN_CITATION: no_orphan_citation,
    AssertionKind.UNCOVERED_QUESTION_DECLINED: uncovered_question_declined,
    AssertionKind.LATEST_REQUEST_EXECUTED: latest_request_executed,
}


def _judge(assertion: Assertion, log: LogIndex) -> AssertionResult:
    finding = _CHECKS[assertion.kind](log)
    return AssertionResult(
        id=assertion.id,
        kind=assertion.kind,
        description=assertion.description,
        state=finding.state,
        supporting=list(dict.fromkeys(finding.supporting)),
        contradicting=list(dict.fromkeys(finding.contradicting)),
        reason=finding.reason,
    )


def _ids_text(ids: list[str]) -> str:
    shown = ", ".join(ids[:_IDS_IN_REASON])
    more = len(ids) - _IDS_IN_REASON
    return f"{shown} and {more} more" if more > 0 else shown


def _verdict(
    results: list[AssertionResult],
    ended: End | None,
    optional: frozenset[str] = frozenset(),
    faults: Sequence[Fault] = (),
) -> tuple[Verdict, ReasonKind, str]:
    """optional: ids of invariants (required=False) that only bind where the run exercised them."""
    contradicted = [r for r in results if r.state is AssertionState.CONTRADICTED]
    if contradicted:
        named = "; ".join(f"{r.id} by {_ids_text(r.contradicting)}" for r in contradicted)
        return Verdict.FAIL, "contradicted", f"Contradicted: {named}."
    if faults:
        # What a faulted agent did not get to do proves nothing either way.
        fault = faults[0]
        return (
            Verdict.INCONCLUSIVE,
            "agent_fault",
            f"The agent under test faulted ({fault.id}: {fault.reason}); a faulted run is "
            "never a PASS.",
        )
    if ended is None:
        return (
            Verdict.INCONCLUSIVE,
            "run_incomplete",
            "The run has not ended (no run.ended yet), so nothing contradicts it but "
            "nothing is proven.",
        )
    if ended.reason_kind != "completed":
        return (
            Verdict.INCONCLUSIVE,
            "run_abandoned",
            f"The run ended {ended.reason_kind} ({ended.reason}) instead of "
            "completing; an unfinished run is never a PASS.",
        )
    missing = [r for r in results if r.state is AssertionState.NO_EVIDENCE and r.id not in optional]
    if missing:
        named = "; ".join(f"{r.id}: {r.reason}" for r in missing)
        return Verdict.INCONCLUSIVE, "missing_event", f"No evidence for {named}"
    supported = [r for r in results if r.state is AssertionState.SUPPORTED]
    if not supported:
        return (
            Verdict.INCONCLUSIVE,
            "missing_event",
            "The call exercised none of its assertions, so there is nothing to prove.",
        )
    if len(supported) < len(results):
        return (
            Verdict.PASS,
            "all_supported",
            f"All {len(supported)} exercised assertions are supported; "
            f"{len(results) - len(supported)} invariant(s) were not exercised.",
        )
    return Verdict.PASS, "all_supported", f"All {len(results)} assertions are supported."


def _evaluate(contract: Contract, events: Sequence[Event]) -> Evaluation:
    log = LogIndex(events)
    results = [_judge(assertion, log) for assertion in contract.assertions]
    optional = frozenset(a.id for a in contract.assertions if not a.required)
    verdict, reason_kind, reason = _verdict(results, log.ended, optional, log.faults)
    return Evaluation(
        evaluator_version=EVALUATOR_VERSION,
        contract_id=contract.id,
        contract_version=contract.version,
        verdict=verdict,
        reason_kind=reason_kind,
        reason=reason,
        assertions=results,
    )


def _evaluator_error(contract: Contract, error: Exception) -> Evaluation:
    try:
        contract_id, version = str(contract.id), int(contract.version)
        detail = f"{type(error).__name__}: {error}"[:300]
    except Exception:  # a contract too broken to read still gets a verdict
        contract_id, version, detail = "unknown", 0, type(error).__name__
    return Evaluation(
        evaluator_version=EVALUATOR_VERSION,
        contract_id=contract_id,
        contract_version=version,
        verdict=Verdict.INCONCLUSIVE,
        reason_kind="evaluator_error",
        reason=f"The evaluator could not read this input ({detail}); it proves nothing.",
        assertions=[],
    )


def evaluate(contract: Contract, events: Sequence[Event]) -> Evaluation:
    """Judge every assertion of contract against the ordered events; never raises."""
    try:
        return _evaluate(contract, events)
    except Exception as error:  # the live panel and report import must always get a verdict
        return _evaluator_error(contract, error)
