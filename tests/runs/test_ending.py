"""A hand-driven call ends itself once the caller goes quiet after the agent's answer."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.runs import ending
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get

pytestmark = pytest.mark.django_db(transaction=True)
CONTRACT = contract_get("double_confirmation")


async def opened() -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id=CONTRACT.id, mode=Mode.GUARDED, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=CONTRACT)
    await session.start()
    return session


async def ended(session: RunSession):
    async with asyncio.timeout(60):
        return await session.wait_for_event(0, lambda e: e.type == "run.ended")


async def test_a_hand_driven_call_says_goodbye_and_ends_once_the_caller_goes_quiet(
    fast_clock, monkeypatch
):
    monkeypatch.setattr(ending, "QUIET_END_S", 1.0)
    session = await opened()
    await session.caller_says("I'd like Thursday morning, please.")
    await session.wait_idle()
    await session.caller_says("Yes, book it.")
    end = await ended(session)
    assert end.payload.reason_kind == "completed"
    assert "said nothing for 1 s" in end.payload.reason
    spoken = [e.payload for e in session.events if e.type == "agent.utterance"]
    assert [u.purpose for u in spoken[-2:]] == ["receipt", "goodbye"]
    run = await database_sync_to_async(Run.objects.get)(pk=session.run.pk)
    assert run.status == Run.Status.ENDED
    events = await database_sync_to_async(store.run_events)(run)
    assert evaluate(CONTRACT, events).verdict is Verdict.PASS


async def test_a_call_never_ends_by_quiet_before_the_caller_has_said_anything(
    fast_clock, monkeypatch
):
    monkeypatch.setattr(ending, "QUIET_END_S", 0.2)
    session = await opened()
    await asyncio.sleep(1.5)  # a negative check: many quiet periods pass, nothing may happen
    assert not session.ended
    await session.end(reason_kind="completed", reason="the caller hung up")


async def test_a_scripted_caller_ends_its_own_run_however_long_its_pauses(fast_clock, monkeypatch):
    monkeypatch.setattr(ending, "QUIET_END_S", 0.01)
    session = await opened()
    await session.play_script()
    end = await ended(session)
    assert end.payload.reason == "the scripted caller finished"
    assert not any(
        e.type == "agent.utterance" and e.payload.purpose == "goodbye" for e in session.events
    )
