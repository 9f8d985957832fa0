"""Calls an outside agent ran on its own tools (ToolObserved, a pipecat bot's function calls):
recorded as observed and as what they did (its own results read, its writes executed), with the
gate's decision beside each in guarded runs, so they are judged as any call."""

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
    # Each observed call is followed by the lookup or commit it was, read from its own result.
    types = [e.type for e in session.events]
    for index in [i for i, kind in enumerate(types) if kind == "tool.call.observed"]:
        following = [t for t in types[index + 1 :] if t.startswith("tool.")]
        assert following[0] in ("tool.lookup.started", "tool.commit.started")
    (commit,) = of_type(session, "tool.commit.started")
    assert (commit.authorized_by is not None) is (mode is Mode.GUARDED)
    (succeeded,) = of_type(session, "tool.commit.succeeded")
    assert succeeded.receipt.adapter == "observed:book_appointment"
    assert succeeded.receipt.receipt_id == observed[-1].result["content"]["receipt_id"]
    # The bot ran it on its own tables: the lab's sandbox executed nothing.
    assert await executions(session) == 0
    (started,) = of_type(session, "run.started")
    assert started.agent.tools_observed_only
    assert "the gate could not stand in front" in started.agent.label()


async def test_guarded_an_observed_stale_booking_the_gate_would_block_happened_and_fails(
    fast_clock,
):
    session = await play("keeps_first_offer", Mode.GUARDED)
    commits = [d for d in of_type(session, "gate.decision") if d.request.operation == "commit"]
    assert [(d.outcome, d.reason_kind) for d in commits] == [("block", "proposal_expired")]
    assert not of_type(session, "agent.fault")
    (started,) = of_type(session, "tool.commit.started")
    assert started.args["day"] == "tuesday" and started.authorized_by is None
    assert of_type(session, "tool.commit.succeeded")
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL, evaluation.reason
    failed = {r.id for r in evaluation.assertions if r.state == "contradicted"}
    assert "commit_is_latest" in failed


async def test_as_is_an_observed_stale_booking_fails_on_the_latest_request(fast_clock):
    session = await play("keeps_first_offer", Mode.UNGUARDED)
    assert len(of_type(session, "tool.commit.succeeded")) == 1
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
