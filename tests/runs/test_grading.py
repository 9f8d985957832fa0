"""Every agent utterance of a live run is graded and audited, right after it is recorded."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from lab.accounts.agents import AgentRef
from lab.audit.models import AuditRecord
from lab.events.types import AgentUtterance, Channel, Mode, RetrievalDone, TurnGraded, TurnGrounding
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.runs.speaker import speech_ms
from lab.scenarios.catalog import contract_get

pytestmark = pytest.mark.django_db(transaction=True)


async def free_call(*lines: str) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id="free",
        mode=Mode.GUARDED,
        channel=Channel.TYPED,
        tenant_agent=AgentRef("demo", "demo-agent"),
    )
    session = RunSession(run=run, contract=contract_get("free"))
    await session.start()
    for line in lines:
        await session.caller_says(line)
    await session.wait_idle()
    return session


async def test_each_utterance_is_followed_by_its_grade_and_grounding_naming_it(fast_clock):
    session = await free_call("How much is a brake service?", "Can I book Thursday afternoon?")
    events = session.events
    utterances = [e for e in events if isinstance(e.payload, AgentUtterance)]
    assert len(utterances) >= 3
    for utterance in utterances:
        after = events[utterance.seq : utterance.seq + 2]
        graded, grounding = after[0].payload, after[1].payload
        assert isinstance(graded, TurnGraded) and isinstance(grounding, TurnGrounding)
        assert graded.utterance_event_id == grounding.utterance_event_id == utterance.id
        assert graded.grade.constraint_list_version == "demo_v1"
    answer = next(u for u in utterances if u.payload.retrieval_event_id)
    retrieval = next(e for e in events if e.id == answer.payload.retrieval_event_id)
    assert isinstance(retrieval.payload, RetrievalDone)
    graded, grounding = (e.payload for e in events[answer.seq : answer.seq + 2])
    assert graded.retrieval_event_id == grounding.retrieval_event_id == retrieval.id
    assert (graded.grade.verdict, grounding.audit.verdict) == ("supported", "ok")
    assert grounding.audit.confidence == retrieval.payload.confidence
    assert "[KB-1]" in answer.payload.text
    greeting = next(e for e in events if e.type == "turn.grounding")
    assert (greeting.payload.audit.verdict, greeting.payload.audit.confidence) == (
        "empty_retrieval",
        None,
    )
    stored = await database_sync_to_async(
        lambda: sorted(
            AuditRecord.objects.filter(run=session.run).values_list("turn_id", flat=True)
        )
    )()
    assert stored == sorted(u.id for u in utterances)


async def test_speech_is_timed_without_the_markers_the_event_keeps(fast_clock):
    session = await free_call("What are your opening hours?")
    answer = [e for e in session.events if e.type == "agent.utterance"][-1]
    words = len(answer.payload.text.replace(" [KB-1]", "").split())
    marked = len(answer.payload.text.split())
    assert marked == words + 1
    assert answer.payload.duration_ms == speech_ms(answer.payload.text.replace(" [KB-1]", ""))
