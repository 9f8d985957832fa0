from __future__ import annotations

from typing import Any

import pytest

from lab.evaluation.evaluator import EVALUATOR_VERSION, evaluate
from lab.evaluation.verdicts import AssertionState, Evaluation, Verdict
from lab.events.types import EVENT_LIST
from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import Assertion, AssertionKind, Contract
from tests.evaluation.logs import SCENARIOS, scenario_log

# Per unguarded run: each contradicted assertion and the marked events that must contradict it.
UNGUARDED_CONTRADICTIONS: dict[str, dict[str, list[str]]] = {
    "correction": {
        "old_proposal_expired": ["revision_2", "commit_started", "commit_succeeded"],
        "commit_is_latest": ["commit_started", "commit_succeeded", "revision_2"],
        "commit_confirmed": ["commit_started", "commit_succeeded", "confirm", "revision_2"],
    },
    "refund_correction": {
        "old_proposal_expired": ["revision_2", "commit_started", "commit_succeeded"],
        "commit_is_latest": ["commit_started", "commit_succeeded", "revision_2"],
        "commit_confirmed": ["commit_started", "commit_succeeded", "confirm", "revision_2"],
    },
    "double_confirmation": {
        "executed_once": [
            "commit_started",
            "commit_succeeded",
            "second_started",
            "second_succeeded",
        ],
    },
    "interruption": {
        "interrupted_proposal_expired": ["interrupted", "commit_started", "commit_succeeded"],
        "commit_is_latest": ["commit_started", "commit_succeeded", "revision_2"],
        "commit_confirmed": ["commit_started", "commit_succeeded", "confirm", "revision_2"],
    },
    "no_confirmation": {
        "still_waiting": ["commit_started", "commit_succeeded"],
        "positive_is_not_yes": ["commit_started", "positive"],
    },
    "tool_timeout": {
        "nothing_invented": ["p1_made", "failed", "commit_started"],
    },
}


def states(evaluation: Evaluation) -> dict[str, AssertionState]:
    return {result.id: result.state for result in evaluation.assertions}


@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_it_passes_every_guarded_run(scenario_id: str) -> None:
    contract = contract_get(scenario_id)
    evaluation = evaluate(contract, scenario_log(scenario_id, guarded=True).events)

    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    assert evaluation.reason_kind == "all_supported"
    assert [result.id for result in evaluation.assertions] == [a.id for a in contract.assertions]
    for result in evaluation.assertions:
        assert result.state is AssertionState.SUPPORTED
        assert result.supporting
        assert not result.contradicting


@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_it_fails_every_unguarded_run_naming_the_contradicting_events(scenario_id: str) -> None:
    log = scenario_log(scenario_id, guarded=False)
    evaluation = evaluate(contract_get(scenario_id), log.events)
    expected = UNGUARDED_CONTRADICTIONS[scenario_id]

    assert evaluation.verdict is Verdict.FAIL
    assert evaluation.reason_kind == "contradicted"
    contradicted = {
        result.id: result.contradicting
        for result in evaluation.assertions
        if result.state is AssertionState.CONTRADICTED
    }
    assert contradicted == {
        assertion_id: [log[mark] for mark in marks] for assertion_id, marks in expected.items()
    }
    for assertion_id, ids in contradicted.items():
        assert f"{assertion_id} by {', '.join(ids)}" in evaluation.reason


def test_it_says_a_commit_without_a_retry_lacks_evidence_beside_the_invented_slot() -> None:
    log = scenario_log("tool_timeout", guarded=False)
    evaluation = evaluate(contract_get("tool_timeout"), log.events)

    assert states(evaluation) == {
        "failure_recorded": AssertionState.NO_EVIDENCE,
        "one_retry": AssertionState.SUPPORTED,
        "nothing_invented": AssertionState.CONTRADICTED,
        # The invented slot was read back and confirmed: the confirmation itself holds.
        "commit_confirmed": AssertionState.SUPPORTED,
    }


@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_it_is_inconclusive_while_the_run_has_not_ended(scenario_id: str) -> None:
    log = scenario_log(scenario_id, guarded=True)
    evaluation = evaluate(contract_get(scenario_id), log.upto("end"))

    assert evaluation.verdict is Verdict.INCONCLUSIVE
    assert evaluation.reason_kind == "run_incomplete"
    assert "run.ended" in evaluation.reason


@pytest.mark.parametrize("end", ["abandoned", "caller_left", "error"])
@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_it_never_passes_a_run_that_did_not_complete_even_with_every_assertion_supported(
    scenario_id: str, end: Any
) -> None:
    log = scenario_log(scenario_id, guarded=True, end=end)
    evaluation = evaluate(contract_get(scenario_id), log.events)

    assert set(states(evaluation).values()) == {AssertionState.SUPPORTED}
    assert evaluation.verdict is Verdict.INCONCLUSIVE
    assert evaluation.reason_kind == "run_abandoned"
    assert end in evaluation.reason


def test_it_fails_a_run_before_it_ends_once_something_is_contradicted() -> None:
    log = scenario_log("correction", guarded=False)
    evaluation = evaluate(contract_get("correction"), log.upto("end"))

    assert evaluation.verdict is Verdict.FAIL
    assert evaluation.reason_kind == "contradicted"


def test_it_names_the_assertion_and_the_expected_event_when_evidence_is_missing() -> None:
    log = scenario_log("correction", guarded=True)
    without_expiry = [event for event in log.events if event.id != log["p1_expired"]]
    evaluation = evaluate(contract_get("correction"), without_expiry)

    assert evaluation.verdict is Verdict.INCONCLUSIVE
    assert evaluation.reason_kind == "missing_event"
    assert states(evaluation)["old_proposal_expired"] is AssertionState.NO_EVIDENCE
    assert "old_proposal_expired" in evaluation.reason
    assert "proposal.expired for p-1" in evaluation.reason


def test_it_stamps_its_version_and_the_contract_it_judged() -> None:
    contract = contract_get("double_confirmation")
    evaluation = evaluate(contract, scenario_log("double_confirmation", guarded=True).events)

    assert evaluation.evaluator_version == EVALUATOR_VERSION == "evaluator-2"
    assert (evaluation.contract_id, evaluation.contract_version) == (contract.id, contract.version)


@pytest.mark.parametrize("guarded", [True, False])
@pytest.mark.parametrize("scenario_id", SCENARIOS)
def test_it_judges_an_imported_log_exactly_as_the_live_one(scenario_id: str, guarded: bool) -> None:
    events = scenario_log(scenario_id, guarded=guarded).events
    imported = EVENT_LIST.validate_json(EVENT_LIST.dump_json(events))
    contract = contract_get(scenario_id)

    assert evaluate(contract, imported) == evaluate(contract, events)


def _unknown_kind_contract() -> Contract:
    broken = Assertion.model_construct(id="mystery", kind="mystery", description="?")
    return contract_get("correction").model_copy(update={"assertions": [broken]})


@pytest.mark.parametrize(
    ("contract", "events"),
    [
        pytest.param(contract_get("correction"), [None], id="not-an-event"),
        pytest.param(contract_get("correction"), 42, id="not-a-sequence"),
        pytest.param(contract_get("correction"), [{"payload": {}}], id="a-raw-dict"),
        pytest.param(_unknown_kind_contract(), [], id="an-unknown-assertion-kind"),
        pytest.param(None, [], id="no-contract"),
    ],
)
def test_it_reports_an_evaluator_error_instead_of_raising(contract: Any, events: Any) -> None:
    evaluation = evaluate(contract, events)

    assert evaluation.verdict is Verdict.INCONCLUSIVE
    assert evaluation.reason_kind == "evaluator_error"
    assert evaluation.assertions == []
    assert evaluation.evaluator_version == EVALUATOR_VERSION


def test_an_evaluator_error_still_names_the_contract_when_it_can_be_read() -> None:
    evaluation = evaluate(contract_get("interruption"), [None])

    assert (evaluation.contract_id, evaluation.contract_version) == ("interruption", 2)
    assert "AttributeError" in evaluation.reason


def test_every_assertion_kind_has_a_check() -> None:
    contract = contract_get("correction").model_copy(
        update={
            "assertions": [
                Assertion(id=kind.value, kind=kind, description=kind.value)
                for kind in AssertionKind
            ]
        }
    )
    evaluation = evaluate(contract, scenario_log("correction", guarded=True).events)

    assert evaluation.reason_kind != "evaluator_error"
    assert len(evaluation.assertions) == len(AssertionKind)
