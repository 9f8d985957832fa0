from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from channels.db import database_sync_to_async

from lab.connectors.interface import (
    AgentOutput,
    CallerTurn,
    PlannedBargeIn,
    Said,
    ToolBox,
    ToolCall,
    TurnFinished,
)
from lab.events.types import Channel, GateDecision, Mode, ToolCallInvalid
from lab.runs.external_tools import GatedToolBox
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.tools.models import ToolExecution
from tests.connectors.outsiders import Outsider

pytestmark = pytest.mark.django_db(transaction=True)


async def started(mode: Mode = Mode.GUARDED) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=mode, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=contract_get("correction"), agent=Outsider())
    await session.start()
    return session


def toolbox(session: RunSession) -> GatedToolBox:
    assert session.toolbox is not None
    return session.toolbox


async def test_the_toolbox_offers_only_the_scenarios_tools_and_refuses_others(fast_clock):
    session = await started()
    tools = toolbox(session)
    assert [spec.name for spec in tools.offered] == ["check_availability", "book_appointment"]
    for name, arguments in [
        ("issue_refund", {"order_number": "4512", "amount_cents": 100}),
        ("rm_rf", {}),
    ]:
        result = await tools.call(ToolCall(call_id="c1", name=name, arguments=arguments))
        assert result.kind == "invalid" and "offered: check_availability" in result.reason
    refused = [e.payload for e in session.events if isinstance(e.payload, ToolCallInvalid)]
    assert [r.name for r in refused] == ["issue_refund", "rm_rf"]
    await session.end(reason_kind="completed", reason="test")


async def test_arguments_that_are_no_object_at_all_are_invalid_not_an_error(fast_clock):
    session = await started()
    call = ToolCall(call_id="c1", name="check_availability", arguments="monday")  # type: ignore[arg-type]
    result = await toolbox(session).call(call)
    assert result.kind == "invalid" and result.reason.startswith("invalid arguments")
    await session.end(reason_kind="completed", reason="test")


async def test_a_lookup_before_any_request_is_blocked_guarded_and_runs_as_is(fast_clock):
    guarded = await started()
    call = ToolCall(call_id="c1", name="check_availability", arguments={"day": "monday"})
    result = await toolbox(guarded).call(call)
    assert result.kind == "blocked" and "no request" in result.reason
    assert not any(e.type == "tool.lookup.started" for e in guarded.events)
    await guarded.end(reason_kind="completed", reason="test")

    as_is = await started(Mode.UNGUARDED)
    result = await toolbox(as_is).call(call)
    assert result.kind == "ok" and [o["day"] for o in result.content["options"]] == ["monday"] * 3
    assert not any(e.type == "gate.decision" for e in as_is.events)
    await as_is.end(reason_kind="completed", reason="test")


async def test_a_commit_with_no_proposal_is_blocked_guarded(fast_clock):
    session = await started()
    slot = {"slot_id": "mon-0900", "day": "monday", "time": "09:00"}
    result = await toolbox(session).call(ToolCall("c1", "book_appointment", slot))
    assert result.kind == "blocked"
    (decision,) = [e.payload for e in session.events if isinstance(e.payload, GateDecision)]
    assert decision.reason_kind == "no_proposal"
    await session.end(reason_kind="completed", reason="test")


class _Offers(Outsider):
    """Reads back the first slot a day's lookup returns and leaves the commit to the test."""

    async def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        if "yes" in turn.text.lower():
            yield Said("Let me do that.")
            yield TurnFinished()
            return
        async for output in super().hear(turn, tools):
            yield output


async def test_two_identical_commits_in_flight_are_decided_one_after_the_other_every_time(
    fast_clock,
):
    for _ in range(20):
        run = await database_sync_to_async(run_start)(
            scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED
        )
        agent = _Offers()
        session = RunSession(run=run, contract=contract_get("correction"), agent=agent)
        await session.start()
        for line in ("I'd like Thursday afternoon, please.", "Yes, book it."):
            await session.caller_says(line)
            await session.wait_idle()  # the readback is heard out, not cut by the yes
        (slot,) = agent.offers
        calls = [ToolCall(f"c{n}", "book_appointment", dict(slot)) for n in (1, 2)]
        results = await asyncio.gather(*(toolbox(session).call(call) for call in calls))
        decisions = [
            e.payload
            for e in session.events
            if isinstance(e.payload, GateDecision) and e.payload.request.operation == "commit"
        ]
        # The second is decided on the state the first left: it gets the original receipt
        # (the gate's replay), never an allow of its own.
        assert [d.outcome for d in decisions] == ["allow", "replay"]
        assert [(r.kind, r.content["replayed"]) for r in results] == [("ok", False), ("ok", True)]
        executed = ToolExecution.objects.filter(run=session.run).count
        assert await database_sync_to_async(executed)() == 1
        await session.end(reason_kind="completed", reason="test")


class _OnALine(_Offers):
    """An agent on a live line: it keeps the barge-in the lab plans, to play it out itself."""

    def __init__(self) -> None:
        super().__init__()
        self.plans: list[PlannedBargeIn] = []

    async def plan_barge_in(self, plan: PlannedBargeIn) -> None:
        self.plans.append(plan)

    async def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        if self.plans and turn.text == self.plans[0].text:
            # Heard on the line as it went out, and acted on then (the test makes that call).
            yield TurnFinished()
            return
        async for output in super().hear(turn, tools):
            yield output


async def test_a_bots_call_waits_for_the_log_to_hold_the_barge_in_its_line_already_carried(
    fast_clock,
):
    """A barge-in goes out on a live line before the scripted caller reaches it in the log; the
    bot acts on the words at once. Its lookup is decided on the revision they make, not refused
    as a repeat of the one before."""
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    agent = _OnALine()
    session = RunSession(run=run, contract=contract_get("correction"), agent=agent)
    await session.start()
    assert await session.turns.plan_barge_in("No, Friday morning instead.", 1200)
    await session.caller_says("I'd like Thursday afternoon, please.")
    await session.wait_idle()
    [plan] = agent.plans
    plan.on_spoken()  # the line is out on the wire; the log does not have it yet
    friday = ToolCall("c9", "check_availability", {"day": "friday", "part_of_day": "morning"})
    lookup = asyncio.ensure_future(toolbox(session).call(friday))
    await asyncio.sleep(0.2)
    assert not lookup.done()
    await session.caller_says("No, Friday morning instead.")
    result = await asyncio.wait_for(lookup, timeout=5)
    assert result.kind == "ok", result
    [decision] = [
        e.payload
        for e in session.events
        if isinstance(e.payload, GateDecision) and e.payload.request.args.get("day") == "friday"
    ]
    assert decision.outcome == "allow" and decision.request.revision == 2, decision
    await session.end(reason_kind="completed", reason="test")
