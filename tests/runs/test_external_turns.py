from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from lab.connectors.tool_specs import TOOL_SPECS, tools_digest
from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.tools.models import ToolExecution
from tests.connectors.outsiders import Habit, Outsider

pytestmark = pytest.mark.django_db(transaction=True)


async def play(scenario: str, habit: Habit, mode: Mode = Mode.GUARDED) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario, mode=mode, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=contract_get(scenario), agent=Outsider(habit))
    async with asyncio.timeout(60):
        await session.start()
        await session.play_script()
    return session


def of_type(session: RunSession, kind: str) -> list:
    return [event.payload for event in session.events if event.type == kind]


async def executions(session: RunSession) -> int:
    return await database_sync_to_async(ToolExecution.objects.filter(run=session.run).count)()


async def test_a_well_behaved_outside_agent_passes_the_correction_scenario_guarded(fast_clock):
    session = await play("correction", "well_behaved")
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    (started,) = of_type(session, "run.started")
    assert started.agent.model == "well_behaved"
    offered = [spec for spec in TOOL_SPECS.values() if spec.action == "book"]
    assert started.agent.tools_digest == tools_digest(offered)
    # The referee, not the agent, recorded the caller's two requests and the two readbacks.
    assert [r.args["day"] for r in of_type(session, "intent.revised")] == ["tuesday", "thursday"]
    assert [p.args["day"] for p in of_type(session, "proposal.made")] == ["tuesday", "thursday"]
    (expired,) = of_type(session, "proposal.expired")
    assert expired.reason_kind == "superseded"
    (commit,) = of_type(session, "tool.commit.started")
    assert commit.proposal_id == "p-2" and commit.authorized_by is not None
    assert await executions(session) == 1
    assert session.agent is not None and session.agent.closed  # type: ignore[attr-defined]


async def test_the_gate_blocks_an_outside_agent_booking_the_slot_before_the_correction(
    fast_clock,
):
    session = await play("correction", "keeps_first_offer")
    commits = [d for d in of_type(session, "gate.decision") if d.request.operation == "commit"]
    assert [(d.outcome, d.reason_kind) for d in commits] == [("block", "proposal_expired")]
    assert commits[0].request.proposal_id == "p-1"
    assert not of_type(session, "tool.commit.started")
    assert await executions(session) == 0
    agent = session.agent
    assert isinstance(agent, Outsider) and agent.results[-1].result.kind == "blocked"
    assert evaluate(session.contract, session.events).verdict is not Verdict.PASS


async def test_as_is_an_outside_agent_booking_the_slot_before_the_correction_fails(fast_clock):
    session = await play("correction", "keeps_first_offer", Mode.UNGUARDED)
    assert not of_type(session, "gate.decision")
    assert await executions(session) == 1
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL
    failed = {r.id for r in evaluation.assertions if r.state == "contradicted"}
    assert {"old_proposal_expired", "commit_is_latest"} <= failed
    assert "old_proposal_expired" in evaluation.reason


async def test_a_hanging_outside_agent_ends_the_run_inconclusive_within_the_turn_timeout(
    fast_clock,
):
    fast_clock.LAB_AGENT_TURN_TIMEOUT_S = 0.3
    session = await play("correction", "hangs")
    (fault,) = of_type(session, "agent.fault")
    assert fault.fault_kind == "timeout"
    (ended,) = of_type(session, "run.ended")
    assert ended.reason_kind == "error" and "faulted" in ended.reason
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.INCONCLUSIVE
    assert evaluation.reason_kind == "agent_fault"


async def test_a_reply_that_never_ends_is_cut_at_the_sentence_cap_as_an_oversize_fault(
    fast_clock,
):
    session = await play("correction", "chatters")
    (fault,) = of_type(session, "agent.fault")
    assert fault.fault_kind == "oversize" and "more than 100 sentences" in fault.reason
    said = [u for u in of_type(session, "agent.utterance") if u.text == "Still talking."]
    assert len(said) == 100
    assert evaluate(session.contract, session.events).verdict is Verdict.INCONCLUSIVE


async def test_a_connector_that_raises_is_an_agent_fault_not_a_crash(fast_clock):
    session = await play("correction", "raises")
    (fault,) = of_type(session, "agent.fault")
    assert fault.fault_kind == "malformed" and "ConnectionResetError" in fault.reason
    assert evaluate(session.contract, session.events).verdict is Verdict.INCONCLUSIVE


async def test_garbage_tool_arguments_get_an_invalid_result_and_a_recorded_event(fast_clock):
    session = await play("correction", "garbage_args")
    (invalid,) = of_type(session, "tool.call.invalid")
    assert invalid.name == "book_appointment" and "slot_id" in invalid.reason
    agent = session.agent
    assert isinstance(agent, Outsider) and agent.results[-1].result.kind == "invalid"
    assert await executions(session) == 0
    (ended,) = of_type(session, "run.ended")
    assert ended.reason_kind == "completed"


@pytest.mark.parametrize("mode", [Mode.GUARDED, Mode.UNGUARDED])
@pytest.mark.parametrize("scenario", ["interruption", "backchannel_readback", "no_confirmation"])
async def test_a_well_behaved_outside_agent_passes_guarded_and_as_is(scenario, mode, fast_clock):
    # As-is the lab still runs its careful loop (an "mm-hmm" is kept from the agent); only the
    # gate stops deciding.
    session = await play(scenario, "well_behaved", mode)
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    assert bool(of_type(session, "gate.decision")) is (mode is Mode.GUARDED)


async def test_as_is_an_outside_agent_inventing_a_slot_after_a_failed_lookup_fails(fast_clock):
    session = await play("tool_timeout", "invents_slot", Mode.UNGUARDED)
    (made,) = of_type(session, "proposal.made")
    assert made.grounded_on is None and made.args == {"day": "wednesday", "time": "14:00"}
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL
    assert "nothing_invented" in evaluation.reason


async def test_the_gate_refuses_an_invented_slot_as_a_proposal_and_its_booking_fails(fast_clock):
    session = await play("tool_timeout", "invents_slot")
    proposes = [d for d in of_type(session, "gate.decision") if d.request.operation == "propose"]
    assert [(d.outcome, d.reason_kind) for d in proposes] == [("block", "ungrounded")]
    assert not of_type(session, "proposal.made") and await executions(session) == 0
    # The caller said its yes without the readback it waited for; the booking the agent then
    # tried, blocked by the gate, is an attempt all the same.
    (missed,) = of_type(session, "caller.cue_missed")
    assert missed.cue == "proposal"
    commits = [d for d in of_type(session, "gate.decision") if d.request.operation == "commit"]
    assert [d.outcome for d in commits] == ["block"]
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL
    assert "nothing_invented" in evaluation.reason


async def test_as_is_keeping_an_interrupted_readbacks_slot_fails_the_interruption_scenario(
    fast_clock,
):
    session = await play("interruption", "keeps_first_offer", Mode.UNGUARDED)
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL
    assert "interrupted_proposal_expired" in evaluation.reason
