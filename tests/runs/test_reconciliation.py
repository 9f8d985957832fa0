"""A process stopped in the write window: on reopening, the log records what the sandbox holds."""

from __future__ import annotations

import asyncio
import io

import pytest
from channels.db import database_sync_to_async
from django.core.management import call_command

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import AssertionState
from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, CommitStarted, Event, Mode
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.tools.adapters import ADAPTERS
from lab.tools.authorization import Authorization, CommitRequest
from lab.tools.models import ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)
CONTRACT = contract_get("double_confirmation")


class Crash(Exception):
    """Stands for kill -9: nothing after the event that raised it is recorded."""


def write_as_the_dead_process_did(run: Run) -> str:
    """Perform the write the stored log authorized and started, as the dead process had."""
    events = store.run_events(run)
    decision = next(e for e in events if e.type == "gate.decision" and e.payload.idempotency_key)
    started: CommitStarted = next(e.payload for e in events if e.type == "tool.commit.started")
    request = CommitRequest(
        action=started.action,
        revision=started.revision,
        proposal_id=started.proposal_id,
        args=started.args,
        idempotency_key=started.idempotency_key,
    )
    result = ADAPTERS["calendar"].commit(run, Authorization.from_decision(decision), request)
    return result.receipt.receipt_id


async def crash_after_commit_started(*, wrote: bool) -> tuple[Run, str | None]:
    run = await database_sync_to_async(run_start)(
        scenario_id=CONTRACT.id, mode=Mode.GUARDED, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=CONTRACT)

    async def die_in_the_write_window(event: Event) -> None:
        if event.type == "tool.commit.started":
            raise Crash

    session.listeners.append(die_in_the_write_window)
    await session.start()
    await session.caller_says("I'd like Thursday morning, please.")
    await session.wait_idle()
    with pytest.raises(Crash):
        await session.caller_says("Yes, book it.")
    session.close()  # the dead process's session does nothing more
    receipt = await database_sync_to_async(write_as_the_dead_process_did)(run) if wrote else None
    stored = await database_sync_to_async(store.run_events)(run)
    assert stored[-1].type == "tool.commit.started"
    return run, receipt


async def reopen(run: Run) -> RunSession:
    events = await database_sync_to_async(store.run_events)(run)
    session = RunSession(run=run, contract=CONTRACT, events=events)
    await session.start()
    return session


async def test_reopening_a_run_records_the_booking_its_dead_process_made(fast_clock):
    run, receipt_id = await crash_after_commit_started(wrote=True)
    session = await reopen(run)
    reconciled = [e for e in session.events if e.type == "tool.commit.reconciled"]
    assert len(reconciled) == 1
    payload = reconciled[0].payload
    assert payload.trigger == "recovery" and payload.receipt.receipt_id == receipt_id
    assert receipt_id in payload.evidence
    told = [e.payload.text for e in session.events if e.type == "agent.utterance"][-1]
    assert f"Your reference is {receipt_id}" in told
    await session.end(reason_kind="completed", reason="the caller hung up")
    evaluation = evaluate(CONTRACT, await database_sync_to_async(store.run_events)(run))
    by_kind = {result.kind: result for result in evaluation.assertions}
    once = by_kind["single_execution"]
    assert once.state is AssertionState.SUPPORTED and reconciled[0].id in once.supporting
    confirmed = by_kind["commit_confirmed_explicitly"]
    assert confirmed.state is AssertionState.SUPPORTED and reconciled[0].id in confirmed.supporting


async def test_reopening_a_run_whose_write_never_happened_says_so_and_voids_the_key(fast_clock):
    run, _ = await crash_after_commit_started(wrote=False)
    session = await reopen(run)
    payload = next(e.payload for e in session.events if e.type == "tool.commit.reconciled")
    assert payload.receipt is None
    told = [e.payload.text for e in session.events if e.type == "agent.utterance"][-1]
    assert "did not go through" in told
    # The write can no longer happen behind the log's back.
    with pytest.raises(Exception, match="not executed"):
        await database_sync_to_async(write_as_the_dead_process_did)(run)
    # Reopening again finds nothing left open.
    again = await reopen(run)
    assert [e.type for e in again.events].count("tool.commit.reconciled") == 1


def test_the_start_up_sweep_reconciles_every_active_run(fast_clock):
    run, receipt_id = asyncio.run(crash_after_commit_started(wrote=True))
    out = io.StringIO()
    call_command("reconcileruns", stdout=out)
    assert "reconciled 1 open commit attempt(s)" in out.getvalue()
    events = store.run_events(run)
    assert events[-1].type == "tool.commit.reconciled"
    assert events[-1].payload.receipt.receipt_id == receipt_id
    assert ToolExecution.objects.filter(run=run).count() == 1
