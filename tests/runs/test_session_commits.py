"""Commits through a live session: what the log and the agent say always agrees with the sandbox."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from lab.events.chain import digest
from lab.events.types import Channel, Mode, ProposalMade
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.runs.tools import ToolCalls
from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import Fault
from lab.tools.models import Appointment, ToolExecution

pytestmark = pytest.mark.django_db(transaction=True)

FRIDAY = {"slot_id": "fri-1000", "day": "friday", "time": "10:00"}


async def played(*faults: Fault) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id="double_confirmation", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    contract = contract_get("double_confirmation").model_copy(update={"faults": list(faults)})
    session = RunSession(run=run, contract=contract)
    await session.start()
    await session.play_script()
    return session


def said(session: RunSession, purpose: str | None = None) -> list[str]:
    return [
        e.payload.text
        for e in session.events
        if e.type == "agent.utterance" and (purpose is None or e.payload.purpose == purpose)
    ]


@database_sync_to_async
def sandbox(session: RunSession) -> tuple[list[str], list[str]]:
    """The receipt ids and booked slot ids the sandbox holds for the run."""
    receipts = ToolExecution.objects.filter(run=session.run, voided=False)
    slots = Appointment.objects.filter(run=session.run).values_list("slot__slot_id", flat=True)
    return [row.receipt_id for row in receipts], list(slots)


async def test_a_commit_sent_with_other_arguments_than_the_gate_authorized_executes_nothing(
    fast_clock, monkeypatch
):
    honest = ToolCalls.commit
    tampered: list[str] = []

    async def tamper(self, proposal: ProposalMade, **kwargs):
        # The first commit carries the gate's authorization but Friday's arguments.
        if not tampered:
            tampered.append(proposal.proposal_id)
            proposal = proposal.model_copy(update={"args": FRIDAY, "args_hash": digest(FRIDAY)})
        await honest(self, proposal, **kwargs)

    monkeypatch.setattr(ToolCalls, "commit", tamper)
    session = await played()
    failed = [e.payload for e in session.events if e.type == "tool.commit.failed"]
    assert [f.failure_kind for f in failed] == ["unauthorized"]
    receipts, slots = await sandbox(session)
    assert slots == ["thu-0900"]
    # The caller's second confirmation then ran the authorized request, once.
    succeeded = [e.payload for e in session.events if e.type == "tool.commit.succeeded"]
    assert [s.receipt.receipt_id for s in succeeded] == receipts
    assert succeeded[0].receipt.args["slot_id"] == "thu-0900"


async def test_a_commit_that_outlives_its_timeout_is_reconciled_and_the_caller_told_the_truth(
    fast_clock,
):
    session = await played(
        Fault(operation="commit", attempt=1, kind="timeout", late_result_after_ms=300)
    )
    types = [e.type for e in session.events]
    assert "tool.commit.failed" not in types
    assert "tool.late_result.rejected" not in types
    assert types.index("tool.commit.uncertain") < types.index("tool.commit.reconciled")
    reconciled = next(e.payload for e in session.events if e.type == "tool.commit.reconciled")
    receipts, slots = await sandbox(session)
    assert reconciled.trigger == "timeout" and not reconciled.replayed
    assert receipts == [reconciled.receipt.receipt_id] and slots == ["thu-0900"]
    spoken = " ".join(said(session))
    assert "taking longer than usual" in spoken
    assert f"it went through. Done: Thursday at 9:00 AM. Your reference is {receipts[0]}" in spoken
    assert "didn't go through" not in spoken
    # The second confirmation replays the reconciled receipt; nothing runs again.
    decisions = [e.payload for e in session.events if e.type == "gate.decision"]
    assert decisions[-1].outcome == "replay" and decisions[-1].reason_kind == "already_executed"
    replayed = [e.payload for e in session.events if e.type == "tool.commit.succeeded"]
    assert [(r.replayed, r.receipt.receipt_id) for r in replayed] == [(True, receipts[0])]


async def test_a_run_ended_while_a_write_is_in_flight_records_the_writes_outcome_first(
    fast_clock,
):
    run = await database_sync_to_async(run_start)(
        scenario_id="double_confirmation", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    contract = contract_get("double_confirmation").model_copy(
        update={"faults": [Fault(operation="commit", attempt=1, kind="timeout")]}
    )
    session = RunSession(run=run, contract=contract)
    await session.start()
    await session.caller_says("I'd like Thursday morning, please.")
    await session.wait_idle()  # the readback has been heard in full
    turn = asyncio.ensure_future(session.caller_says("Yes, book it."))
    async with asyncio.timeout(30):
        await session.wait_for_event(0, lambda e: e.type == "tool.commit.started")
    turn.cancel()  # the caller hangs up mid-write
    await session.end(reason_kind="caller_left", reason="the caller left the call")
    types = [e.type for e in session.events]
    assert types[-1] == "run.ended"
    reconciled = next(e.payload for e in session.events if e.type == "tool.commit.reconciled")
    receipts, _ = await sandbox(session)
    assert receipts == [reconciled.receipt.receipt_id]
