"""Calls an outside agent ran on its own tools (ToolObserved, a pipecat bot's function calls):
recorded as observed, put to the gate and answered by the sandbox, so they are judged as any."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.tools.models import ToolExecution
from tests.connectors.outsiders import Habit, ObservedOutsider

pytestmark = pytest.mark.django_db(transaction=True)


async def play(habit: Habit, mode: Mode) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=mode, channel=Channel.TYPED
    )
    agent = ObservedOutsider(habit)
    session = RunSession(run=run, contract=contract_get("correction"), agent=agent)
    async with asyncio.timeout(60):
        await session.start()
        await session.play_script()
    return session


def of_type(session: RunSession, kind: str) -> list:
    return [event.payload for event in session.events if event.type == kind]


async def executions(session: RunSession) -> int:
    return await database_sync_to_async(ToolExecution.objects.filter(run=session.run).count)()


@pytest.mark.parametrize("mode", [Mode.GUARDED, Mode.UNGUARDED])
async def test_an_observed_well_behaved_agent_passes_with_each_call_recorded_before_its_answer(
    mode, fast_clock
):
    session = await play("well_behaved", mode)
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    observed = of_type(session, "tool.call.observed")
    assert [o.name for o in observed] == ["check_availability"] * 2 + ["book_appointment"]
    assert observed[-1].arguments["day"] == "thursday"
    assert observed[-1].result["kind"] == "ok"
    # Each observed call is followed by the sandbox's own lookup or commit of the same call.
    types = [e.type for e in session.events]
    for index in [i for i, kind in enumerate(types) if kind == "tool.call.observed"]:
        following = [t for t in types[index + 1 :] if t.startswith("tool.")]
        assert following[0] in ("tool.lookup.started", "tool.commit.started")
    (commit,) = of_type(session, "tool.commit.started")
    assert (commit.authorized_by is not None) is (mode is Mode.GUARDED)
    assert await executions(session) == 1
    (started,) = of_type(session, "run.started")
    assert started.agent.tools_observed_only
    assert "the gate could not stand in front" in started.agent.label()


async def test_guarded_an_observed_stale_booking_is_an_ungated_fault_and_never_passes(
    fast_clock,
):
    session = await play("keeps_first_offer", Mode.GUARDED)
    commits = [d for d in of_type(session, "gate.decision") if d.request.operation == "commit"]
    assert [(d.outcome, d.reason_kind) for d in commits] == [("block", "proposal_expired")]
    (fault,) = of_type(session, "agent.fault")
    assert fault.fault_kind == "ungated" and "book_appointment" in fault.reason
    assert of_type(session, "tool.call.observed")[-1].arguments["day"] == "tuesday"
    assert await executions(session) == 0
    assert evaluate(session.contract, session.events).verdict is not Verdict.PASS


async def test_as_is_an_observed_stale_booking_fails_on_the_latest_request(fast_clock):
    session = await play("keeps_first_offer", Mode.UNGUARDED)
    assert await executions(session) == 1
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL
    failed = {r.id for r in evaluation.assertions if r.state == "contradicted"}
    assert "commit_is_latest" in failed


async def test_an_observed_identity_keeps_older_run_started_hashes(fast_clock):
    session = await play("well_behaved", Mode.GUARDED)
    (started,) = of_type(session, "run.started")
    plain = started.agent.model_copy(update={"tools_observed_only": False})
    assert "tools_observed_only" not in plain.model_dump()
    assert started.agent.model_dump()["tools_observed_only"] is True
