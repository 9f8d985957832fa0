"""Properties over partial and scrambled logs, as the live panel and a bad import produce them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Evaluation, Verdict
from lab.scenarios.catalog import contract_get
from tests.evaluation.logs import SCENARIOS, Log, scenario_log

GUARDED = {scenario_id: scenario_log(scenario_id, guarded=True) for scenario_id in SCENARIOS}
UNGUARDED = {scenario_id: scenario_log(scenario_id, guarded=False) for scenario_id in SCENARIOS}
# Derandomized and without an example database: the same examples on every run, no files.
DETERMINISTIC = settings(derandomize=True, database=None, max_examples=300, deadline=None)


def prefix(log: Log, length: int) -> list:
    return log.events[: min(length, len(log.events))]


@DETERMINISTIC
@given(scenario_id=st.sampled_from(SCENARIOS), length=st.integers(min_value=0, max_value=60))
def test_a_guarded_prefix_never_passes_before_run_ended_and_never_fails(
    scenario_id: str, length: int
) -> None:
    events = prefix(GUARDED[scenario_id], length)
    evaluation = evaluate(contract_get(scenario_id), events)

    ended = any(event.type == "run.ended" for event in events)
    assert evaluation.verdict is not Verdict.FAIL, evaluation.reason
    assert (evaluation.verdict is Verdict.PASS) == ended


@DETERMINISTIC
@given(scenario_id=st.sampled_from(SCENARIOS), length=st.integers(min_value=0, max_value=60))
def test_an_unguarded_prefix_never_passes(scenario_id: str, length: int) -> None:
    evaluation = evaluate(contract_get(scenario_id), prefix(UNGUARDED[scenario_id], length))

    assert evaluation.verdict is not Verdict.PASS


@DETERMINISTIC
@given(
    scenario_id=st.sampled_from(SCENARIOS),
    guarded=st.booleans(),
    data=st.data(),
)
def test_a_scrambled_log_gets_a_verdict_and_never_a_pass_without_run_ended(
    scenario_id: str, guarded: bool, data: st.DataObject
) -> None:
    log = (GUARDED if guarded else UNGUARDED)[scenario_id]
    events = data.draw(st.lists(st.sampled_from(log.events), max_size=len(log.events)))
    evaluation = evaluate(contract_get(scenario_id), events)

    assert isinstance(evaluation, Evaluation)
    assert evaluation.reason_kind != "evaluator_error", evaluation.reason
    if not any(event.type == "run.ended" for event in events):
        assert evaluation.verdict is not Verdict.PASS
