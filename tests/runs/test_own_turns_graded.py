"""The lab's own guarded agent, graded: its turns are never contradicted and almost never flagged.

Fail-closed grading flags declaratives about the business that match no check; this measures
what that costs on the scripted agent's real turns, scenario by scenario and in free calls.
"""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from lab.events.types import Channel, Mode, TurnGraded
from lab.grading.schema import Verdict
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import all_contracts, contract_get

pytestmark = pytest.mark.django_db(transaction=True)

# Questions callers ask in a free call: every topic the scripted agent answers.
FREE_QUESTIONS = (
    "How much is a tune-up?",
    "What does a full service cost?",
    "Are you open on Saturday?",
    "What time do you close on Friday?",
    "Are you open Sundays?",
    "What's your refund policy?",
    "Is there a fee if I cancel?",
    "Can I reschedule my appointment?",
    "Can you put me through to the manager?",
    "Do you have a student discount?",
    "Do you sell bikes?",
    "Do you have parking?",
    "Can I book a brake service Thursday afternoon?",
)


async def _grades(session: RunSession) -> list[tuple[str, Verdict]]:
    texts = {e.id: e.payload.text for e in session.events if e.type == "agent.utterance"}
    return [
        (texts[e.payload.utterance_event_id], e.payload.grade.verdict)
        for e in session.events
        if isinstance(e.payload, TurnGraded)
    ]


async def _scenario(scenario_id: str) -> list[tuple[str, Verdict]]:
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=Mode.GUARDED, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=contract_get(scenario_id))
    await session.start()
    await session.play_script()
    return await _grades(session)


async def _free() -> list[tuple[str, Verdict]]:
    run = await database_sync_to_async(run_start)(
        scenario_id="free", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=contract_get("free"))
    await session.start()
    for line in FREE_QUESTIONS:
        await session.caller_says(line)
        await session.wait_idle()
    return await _grades(session)


async def test_the_guarded_agents_own_turns_are_never_unsupported_and_rarely_flagged(fast_clock):
    graded = await _free()
    for scenario_id in all_contracts():
        graded += await _scenario(scenario_id)
    flagged = [text for text, verdict in graded if verdict is Verdict.LLM_FLAGGED]
    wrong = [text for text, verdict in graded if verdict is Verdict.UNSUPPORTED]
    print(f"own turns: {len(graded)} graded, {len(flagged)} flagged, {len(wrong)} unsupported")
    for text, verdict in graded:
        print(f"  {verdict.value:<13} {text}")
    assert len(graded) >= 40
    assert not wrong
    assert len(flagged) <= 0.02 * len(graded), flagged
