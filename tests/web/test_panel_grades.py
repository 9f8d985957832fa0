"""The run panel shows each agent turn's grade and grounding verdict: live, shared, replayed."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from lab.events.types import AgentUtterance, Channel, Mode
from lab.runs.ownership import share_link_create
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.web.panel import event_fragments, panel_context
from lab.web.report_views import _replay_steps
from tests.reports.graded_call import TRUE_ANSWER, WRONG_ANSWER, graded_call
from tests.web.owners import act_as_owner

FREE = contract_get("free")


def _turn(html: str, event_id: str) -> str:
    """The transcript item of one turn in a page or fragment."""
    match = re.search(rf'<div class="turn [^"]*" id="tr-{event_id}".*?\n        </div>', html, re.S)
    assert match, f"no transcript item tr-{event_id}"
    return match.group(0)


def test_the_grade_swaps_its_utterance_in_again_with_the_badge_and_the_why():
    events = graded_call(WRONG_ANSWER)
    said, graded, grounding = events[3], events[4], events[5]
    before = event_fragments(FREE, events[:4], said)
    assert "badge grade" not in _turn(before, said.id)
    after_grade = _turn(event_fragments(FREE, events[:5], graded), said.id)
    assert 'hx-swap-oob="true"' in after_grade
    assert '<span class="badge grade unsupported"' in after_grade
    assert "badge grounding" not in after_grade  # its audit is the next event
    item = _turn(event_fragments(FREE, events[:6], grounding), said.id)
    assert '<span class="badge grade unsupported"' in item
    assert '<span class="badge grounding ok"' in item
    assert "<details" in item
    assert "<code>px_bike_fit</code>" in item  # the constraint checked
    assert graded.payload.grade.rationale.replace("'", "&#x27;") in item
    assert "kb.price.px_bike_fit" in item and "costs $45.00" in item  # the cited chunk
    assert "cited" in item and "demo_v1" in item


def test_a_supported_turn_reads_supported():
    events = graded_call(TRUE_ANSWER)
    page = panel_context(FREE, events)
    agent = next(t for t in page["transcript"] if t.speaker == "agent")
    assert agent.audit is not None and agent.audit.verdict_label == "supported"
    assert agent.audit.chunks[0].cited


def test_replay_steps_carry_the_badge_when_the_grade_arrives():
    events = graded_call(WRONG_ANSWER)
    steps = _replay_steps(FREE, events)
    said = events[3]
    assert "badge grade" not in steps[4]  # step n is event n: the utterance alone
    assert '<span class="badge grade unsupported"' in _turn(str(steps[5]), said.id)


def _no_inline_code(page: str) -> None:
    assert "<style" not in page
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page)


@pytest.mark.django_db(transaction=True)
async def test_finished_and_shared_run_pages_show_each_turns_grade(fast_clock):
    run = await database_sync_to_async(run_start)(
        scenario_id="free", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    session = RunSession(run=run, contract=FREE)
    await session.start()
    await session.caller_says("How much is a brake service?")
    await session.wait_idle()
    await session.end(reason_kind="completed", reason="the caller hung up")
    answer = next(
        e
        for e in session.events
        if isinstance(e.payload, AgentUtterance) and e.payload.retrieval_event_id
    )

    def pages() -> tuple[str, str]:
        owner = Client()
        act_as_owner(owner)
        mine = owner.get(f"/runs/{run.id}/").content.decode()
        token = share_link_create(run=run)
        return mine, Client().get(f"/share/{token}/").content.decode()

    for page in await database_sync_to_async(pages)():
        _no_inline_code(page)
        assert "css/grading.css" in page
        item = _turn(page, answer.id)
        assert '<span class="badge grade supported"' in item
        assert '<span class="badge grounding ok"' in item
        assert "px_brake_service" in item
