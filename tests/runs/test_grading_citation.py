"""require_citation: an uncited answer with retrieval context is blocked before it is spoken."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async

from lab.events.types import AgentUtterance, Channel, CitationBlocked, Mode
from lab.grading.grounding import FALLBACK
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.scripted.answers import NOT_COVERED

pytestmark = pytest.mark.django_db(transaction=True)


async def asked(question: str, *, require_citation: bool | None) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id="free", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    contract = contract_get("free").model_copy(update={"require_citation": require_citation})
    session = RunSession(run=run, contract=contract)
    await session.start()
    await session.caller_says(question)
    await session.wait_idle()
    return session


def said(session: RunSession) -> list[AgentUtterance]:
    return [e.payload for e in session.events if isinstance(e.payload, AgentUtterance)]


async def test_an_uncited_answer_is_replaced_by_the_fallback_and_recorded(fast_clock):
    session = await asked("How much is a haircut?", require_citation=True)
    blocked = [e for e in session.events if isinstance(e.payload, CitationBlocked)]
    assert len(blocked) == 1
    assert (blocked[0].payload.blocked_text, blocked[0].payload.reason_kind) == (
        NOT_COVERED,
        "no_marker",
    )
    assert said(session)[-1].text == FALLBACK
    assert all(u.text != NOT_COVERED for u in said(session))
    grounding = [e.payload for e in session.events if e.type == "turn.grounding"][-1]
    assert grounding.audit.verdict == "empty_retrieval"


async def test_a_cited_answer_and_turns_without_retrieval_pass_through(fast_clock):
    session = await asked("How much is a brake service?", require_citation=True)
    assert not [e for e in session.events if isinstance(e.payload, CitationBlocked)]
    assert said(session)[-1].text.endswith("[KB-1].")


async def test_without_require_citation_the_honest_decline_is_spoken(fast_clock):
    session = await asked("How much is a haircut?", require_citation=None)
    assert said(session)[-1].text == NOT_COVERED


def test_a_contract_that_does_not_set_require_citation_keeps_its_hash():
    contract = contract_get("free")
    assert contract.require_citation is None
    assert "require_citation" not in contract.model_dump(mode="json")
    assert contract.model_copy(update={"require_citation": True}).contract_hash != (
        contract.contract_hash
    )
