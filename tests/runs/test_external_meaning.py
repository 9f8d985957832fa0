"""The referee judges an outside agent on what the scripted caller means, not on how the lab's
understanding reads the words: a line the lab misreads gives the annotated verdict."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.types import CallerUnderstood, Channel, Mode, RunStarted
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import CallerLine, Contract
from lab.scenarios.meaning import CallerMeaning
from lab.scripted.dialogue import AGENT_VERSION
from lab.web.panel import referee_used
from tests.connectors.outsiders import Outsider

pytestmark = pytest.mark.django_db(transaction=True)

# The lab reads "the day after Wednesday" as Wednesday; the caller means Thursday.
MISREAD = "Actually, the day after Wednesday, in the afternoon."
THURSDAY_AFTERNOON = CallerMeaning(
    kind="correction", action="book", changes={"day": "thursday", "part_of_day": "afternoon"}
)


def misread_correction(*, annotated: bool) -> Contract:
    """The correction scenario with its correction in words the lab's understanding misreads."""
    correction = contract_get("correction")
    first, _, confirm = correction.caller
    second = CallerLine(say=MISREAD, after="proposal", means=THURSDAY_AFTERNOON)
    # The yes waits on the agent, not on a proposal the Wednesday offer never makes.
    lines = [first, second, confirm.model_copy(update={"after": "agent_idle"})]
    if not annotated:
        lines = [line.model_copy(update={"means": None}) for line in lines]
    return correction.model_copy(update={"caller": lines})


async def play(contract: Contract, mode: Mode, *, outside: bool = True) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id=contract.id, mode=mode, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=contract, agent=Outsider() if outside else None)
    async with asyncio.timeout(60):
        await session.start()
        await session.play_script()
    return session


def payloads(session: RunSession, kind: type) -> list:
    return [e.payload for e in session.events if isinstance(e.payload, kind)]


async def test_an_agent_booking_the_misread_day_fails_on_the_annotation_as_is(fast_clock):
    session = await play(misread_correction(annotated=True), Mode.UNGUARDED)
    revised = [e.payload.args for e in session.events if e.type == "intent.revised"]
    assert revised[-1] == {"day": "thursday", "part_of_day": "afternoon"}
    (booked,) = [e.payload for e in session.events if e.type == "tool.commit.started"]
    assert booked.args["day"] == "wednesday"  # the agent followed the words the lab misreads
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.FAIL, evaluation.reason
    failed = {r.id for r in evaluation.assertions if r.state == "contradicted"}
    assert "commit_is_latest" in failed
    assert all(u.annotated for u in payloads(session, CallerUnderstood))
    assert referee_used(session.events) == "scenario annotations"


async def test_the_lab_understanding_would_have_passed_the_same_agent(fast_clock):
    # Without the annotations the referee believes its misreading: Wednesday, and a PASS.
    session = await play(misread_correction(annotated=False), Mode.UNGUARDED)
    revised = [e.payload.args for e in session.events if e.type == "intent.revised"]
    assert revised[-1]["day"] == "wednesday"
    evaluation = evaluate(session.contract, session.events)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    assert not any(u.annotated for u in payloads(session, CallerUnderstood))
    assert referee_used(session.events) == "the lab's understanding"


async def test_guarded_the_gate_refuses_the_misread_day_on_the_annotation(fast_clock):
    session = await play(misread_correction(annotated=True), Mode.GUARDED)
    commits = [
        d
        for d in session.events
        if d.type == "gate.decision" and d.payload.request.operation == "commit"
    ]
    assert [d.payload.outcome for d in commits] == ["block"]
    assert not [e for e in session.events if e.type == "tool.commit.started"]


async def test_an_outside_agent_is_versioned_by_its_connector_not_the_scripted_agent(fast_clock):
    session = await play(contract_get("double_confirmation"), Mode.GUARDED)
    (started,) = payloads(session, RunStarted)
    assert started.agent_version == "openai:well_behaved"
    assert evaluate(session.contract, session.events).verdict is Verdict.PASS
    assert referee_used(session.events) == "scenario annotations"

    scripted = await play(contract_get("double_confirmation"), Mode.GUARDED, outside=False)
    (started,) = payloads(scripted, RunStarted)
    assert started.agent_version == AGENT_VERSION and started.agent is None
    assert referee_used(scripted.events) is None


async def test_a_spoken_lines_first_transcript_takes_its_meaning_and_only_that_one(fast_clock):
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=contract_get("correction"), agent=Outsider())
    await session.start()
    # What the script sets before it speaks a line on a voice run; the recognizer garbles it.
    session.voiced_meaning = CallerMeaning(
        kind="request", action="book", args={"day": "tuesday", "part_of_day": "morning"}
    )
    await session.caller_says("Book me something choose day morning.", source="asr")
    await session.caller_says("please", source="asr")
    first, second = payloads(session, CallerUnderstood)
    assert first.annotated and first.args == {"day": "tuesday", "part_of_day": "morning"}
    assert not second.annotated
    await session.end(reason_kind="completed", reason="test")
