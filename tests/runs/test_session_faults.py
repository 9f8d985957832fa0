from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import Fault
from lab.tools.models import ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)


async def play_with_faults(*faults: Fault) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id="double_confirmation", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    contract = contract_get("double_confirmation").model_copy(update={"faults": list(faults)})
    session = RunSession(run=run, contract=contract)
    await session.start()
    await session.play_script()
    return session


async def test_a_lookup_that_times_out_is_retried_and_its_late_result_rejected(fast_clock):
    # Reads keep the timeout-then-late-result-rejected path; commits never take it.
    session = await play_with_faults(
        Fault(operation="lookup", attempt=1, kind="timeout", late_result_after_ms=100)
    )
    failed = next(e.payload for e in session.events if e.type == "tool.lookup.failed")
    assert failed.failure_kind == "timeout"
    late = next(e.payload for e in session.events if e.type == "tool.late_result.rejected")
    assert late.attempt_id == failed.attempt_id
    attempts = [e.payload.attempt for e in session.events if e.type == "tool.lookup.started"]
    assert attempts == [1, 2]
    executions = await database_sync_to_async(ToolExecution.objects.filter(run=session.run).count)()
    assert executions == 1


async def test_a_commit_that_errors_is_terminal_for_its_key(fast_clock):
    session = await play_with_faults(Fault(operation="commit", attempt=1, kind="error"))
    failed = next(e.payload for e in session.events if e.type == "tool.commit.failed")
    assert failed.failure_kind == "error"
    decisions = [e.payload for e in session.events if e.type == "gate.decision"]
    assert decisions[-1].outcome == "block"
    assert not any(e.type == "tool.commit.succeeded" for e in session.events)


async def test_a_lookup_error_is_recorded_and_retried_once(fast_clock):
    session = await play_with_faults(Fault(operation="lookup", attempt=1, kind="error"))
    attempts = [e.payload.attempt for e in session.events if e.type == "tool.lookup.started"]
    assert attempts == [1, 2]
    assert any(
        e.type == "tool.lookup.failed" and e.payload.failure_kind == "error" for e in session.events
    )
