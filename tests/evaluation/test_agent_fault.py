from __future__ import annotations

from datetime import UTC, datetime

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.chain import EventChain
from lab.events.types import AgentFaulted, Event
from lab.scenarios.catalog import contract_get
from tests.evaluation.logs import scenario_log

AT = datetime(2025, 3, 4, 11, 0, tzinfo=UTC)


def with_fault_before_the_end(events: list[Event]) -> list[Event]:
    """The same log with an agent.fault recorded just before run.ended."""
    chain = EventChain(events[:-1])
    chain.append(AgentFaulted(fault_kind="malformed", reason="garbage reply"), at=AT)
    chain.append(events[-1].payload, at=AT)
    return chain.events


def test_an_agent_fault_makes_a_run_that_would_pass_inconclusive():
    events = scenario_log("correction", guarded=True).events
    contract = contract_get("correction")
    assert evaluate(contract, events).verdict is Verdict.PASS
    evaluation = evaluate(contract, with_fault_before_the_end(events))
    assert evaluation.verdict is Verdict.INCONCLUSIVE
    assert evaluation.reason_kind == "agent_fault" and "garbage reply" in evaluation.reason


def test_a_contradiction_still_fails_a_run_whose_agent_faulted():
    events = scenario_log("correction", guarded=False).events
    evaluation = evaluate(contract_get("correction"), with_fault_before_the_end(events))
    assert evaluation.verdict is Verdict.FAIL
    assert evaluation.reason_kind == "contradicted"
