"""An outside agent whose tools are the run's MCP URL: the SDK's own client carries every call
over HTTP to the lab, and the gate stands in front of the sandbox in guarded runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Literal

import pytest
from channels.db import database_sync_to_async
from mcp.client import ClientSession
from mcp.shared.exceptions import MCPError

from lab.connectors.interface import (
    AgentIdentity,
    AgentOutput,
    CallerTurn,
    ToolBox,
    ToolCall,
    ToolResult,
)
from lab.connectors.mcp_access import mcp_token_issue
from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.tools.models import ToolExecution
from tests.connectors.mcp_serving import lab_served, mcp_session, mcp_url, text_of
from tests.connectors.outsiders import Habit, Outsider

pytestmark = pytest.mark.django_db(transaction=True)

Repeat = Literal["after", "at_once"] | None


class OverMcp:
    """The tools an agent framework's MCP client offers its model: each call a tools/call."""

    def __init__(self, session: ClientSession, *, repeat_commits: Repeat = None) -> None:
        self.session = session
        self.repeat_commits = repeat_commits
        self.answers: list[tuple[ToolCall, Any]] = []

    async def call(self, call: ToolCall) -> ToolResult:
        if call.name != "book_appointment" or self.repeat_commits is None:
            return await self._call(call)
        if self.repeat_commits == "at_once":
            # Two identical calls in flight together, as parallel tool calls send them.
            first, _ = await asyncio.gather(self._call(call), self._call(call))
            return first
        # The client retries the identical call, as a framework does after a dropped reply.
        await self._call(call)
        return await self._call(call)

    async def _call(self, call: ToolCall) -> ToolResult:
        answer = await self.session.call_tool(call.name, call.arguments)
        self.answers.append((call, answer))
        structured = answer.structured_content or {}
        if not answer.is_error:
            return ToolResult(call.call_id, "ok", structured)
        return ToolResult(call.call_id, structured["outcome"], reason=text_of(answer))


class McpAgent:
    """An outside agent (tests/connectors/outsiders.py's habits) whose tools are the run's MCP URL:
    it ignores the ToolBox the session hands it."""

    def __init__(self, habit: Habit, tools: OverMcp, url: str) -> None:
        self.inner = Outsider(habit)
        self.tools = tools
        self.identity = AgentIdentity(connector="mcp", endpoint=url, model=habit)

    def greet(self, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        return self.inner.greet(self.tools)

    def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        return self.inner.hear(turn, self.tools)

    async def close(self) -> None:
        await self.inner.close()


@database_sync_to_async
def mcp_run(mode: Mode) -> tuple[Run, str]:
    run = run_start(scenario_id="correction", mode=mode, channel=Channel.TYPED)
    return run, mcp_token_issue(run=run)


async def play_over_mcp(
    habit: Habit, mode: Mode = Mode.GUARDED, *, repeat_commits: Repeat = None
) -> tuple[RunSession, OverMcp, MCPError]:
    """The correction scenario's scripted caller against an agent calling tools over MCP; and
    what the same client is told when it calls once more after the run ended."""
    run, token = await mcp_run(mode)
    async with lab_served() as base:
        url = mcp_url(base, str(run.id))
        async with mcp_session(url, token) as client:
            tools = OverMcp(client, repeat_commits=repeat_commits)
            session = RunSession(
                run=run, contract=contract_get("correction"), agent=McpAgent(habit, tools, url)
            )
            async with asyncio.timeout(90):
                await session.start()
                # A tool the run does not offer: refused by the run's ToolBox, and on its log.
                stray = await client.call_tool("issue_refund", {"order_number": "4512"})
                tools.answers.append((ToolCall("stray", "issue_refund", {}), stray))
                await session.play_script()
            with pytest.raises(MCPError) as after_end:
                await client.call_tool("check_availability", {"day": "thursday"})
    return session, tools, after_end.value


def of_type(session: RunSession, kind: str) -> list:
    return [event.payload for event in session.events if event.type == kind]


async def executions(session: RunSession) -> list[ToolExecution]:
    rows = ToolExecution.objects.filter(run=session.run)
    return await database_sync_to_async(list)(rows)


async def test_the_gate_blocks_a_booking_over_mcp_of_the_slot_before_the_correction(fast_clock):
    session, tools, after_end = await play_over_mcp("keeps_first_offer")
    stray, stray_answer = tools.answers.pop(0)
    assert stray.name == "issue_refund" and stray_answer.is_error
    assert stray_answer.structured_content["outcome"] == "invalid"
    (invalid,) = of_type(session, "tool.call.invalid")
    assert invalid.name == "issue_refund" and invalid.call_id == "mcp-1"
    names = [(call.name, call.arguments.get("day")) for call, _ in tools.answers]
    assert names == [
        ("check_availability", "tuesday"),
        ("check_availability", "thursday"),
        ("book_appointment", "tuesday"),
    ]
    stale = tools.answers[-1][1]
    assert stale.is_error
    assert stale.structured_content["outcome"] == "blocked"
    commits = [d for d in of_type(session, "gate.decision") if d.request.operation == "commit"]
    assert [(d.outcome, d.reason_kind) for d in commits] == [("block", "proposal_expired")]
    assert commits[0].request.proposal_id == "p-1"
    # The agent's model reads the gate's own reason for the refusal.
    assert text_of(stale) == commits[0].reason
    assert not of_type(session, "tool.commit.started")
    assert await executions(session) == []
    assert evaluate(session.contract, session.events).verdict is not Verdict.PASS
    assert after_end.error.message == "this run has ended; its tools are closed"


@pytest.mark.parametrize("repeat", ["after", "at_once"])
async def test_the_confirmed_slot_over_mcp_executes_once_and_a_repeat_replays_its_receipt(
    fast_clock, repeat
):
    session, tools, after_end = await play_over_mcp("well_behaved", repeat_commits=repeat)
    bookings = [answer for call, answer in tools.answers if call.name == "book_appointment"]
    assert len(bookings) == 2
    first, retry = bookings
    assert not first.is_error and not retry.is_error
    assert first.structured_content["receipt_id"] == retry.structured_content["receipt_id"]
    commits = [d for d in of_type(session, "gate.decision") if d.request.operation == "commit"]
    assert [d.outcome for d in commits] == ["allow", "replay"]
    assert commits[0].request.args["day"] == "thursday"
    (executed,) = await executions(session)
    assert executed.args["day"] == "thursday"
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    (started,) = of_type(session, "run.started")
    assert started.agent.connector == "mcp"
    assert after_end.error.message == "this run has ended; its tools are closed"


async def test_as_is_the_stale_booking_over_mcp_executes_and_the_evaluator_fails_it(fast_clock):
    session, tools, _ = await play_over_mcp("keeps_first_offer", Mode.UNGUARDED)
    stale = tools.answers[-1]
    assert stale[0].arguments["day"] == "tuesday"
    assert not stale[1].is_error
    assert not of_type(session, "gate.decision")
    (executed,) = await executions(session)
    assert executed.args["day"] == "tuesday"
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL
    failed = {r.id for r in evaluation.assertions if r.state == "contradicted"}
    assert "commit_is_latest" in failed
