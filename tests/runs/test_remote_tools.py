"""An outside agent whose own tools call the run's sandbox remotely (the HTTP sandbox's path), on
any wire: its run is a live call while it plays, and each call its wire reports afterwards is the
one the sandbox served, recorded once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from channels.db import database_sync_to_async

from lab.connectors.interface import (
    AgentOutput,
    CallerTurn,
    ToolBox,
    ToolCall,
    ToolCalled,
    ToolObserved,
    ToolResult,
)
from lab.connectors.live_calls import NoLiveCall, call_matched
from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.tools.models import ToolExecution
from tests.connectors.outsiders import Outsider

pytestmark = pytest.mark.django_db(transaction=True)


class _Sandbox:
    """What the HTTP sandbox does with a tool call that names call_id (or none)."""

    def __init__(self, call_id: str | None) -> None:
        self.call_id = call_id

    async def call(self, call: ToolCall) -> ToolResult:
        return await call_matched(self.call_id).tools.call(call)


class RemoteOutsider(Outsider):
    """A bot whose own function handlers POST to the sandbox, then report each call on its wire
    (as pipecat's RTVI observer does)."""

    def __init__(self, call_id: str | None) -> None:
        super().__init__("well_behaved")
        self.identity = self.identity.model_copy(update={"connector": "pipecat"})
        self.sandbox = _Sandbox(call_id)

    async def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        async for output in super().hear(turn, self.sandbox):
            if isinstance(output, ToolCalled):
                result = {"kind": output.result.kind, "content": output.result.content}
                yield ToolObserved(output.call, result)
            else:
                yield output


class NamedRemoteOutsider(RemoteOutsider):
    """The same bot told its call's id on its own wire (a phone line's lab_call_id)."""

    call_id = "line-7"


@pytest.mark.parametrize("named", [False, True])
async def test_a_bot_with_its_tools_on_the_sandbox_reaches_its_run_and_is_recorded_once(
    named, fast_clock
):
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    agent = NamedRemoteOutsider("line-7") if named else RemoteOutsider(str(run.id))
    session = RunSession(run=run, contract=contract_get("correction"), agent=agent)
    async with asyncio.timeout(60):
        await session.start()
        await session.play_script()
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    # Served by the run's sandbox (executed there), never observed again when reported.
    executions = ToolExecution.objects.filter(run=run).count
    assert await database_sync_to_async(executions)() == 1
    assert not [e for e in session.events if e.type == "tool.call.observed"]
    await session.end(reason_kind="completed", reason="test over")
    with pytest.raises(NoLiveCall):
        call_matched(agent.sandbox.call_id)
