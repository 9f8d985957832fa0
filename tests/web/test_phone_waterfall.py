"""A phone call's waterfall: each reply's wait and each barge-in's cut, on the run page and in
the checked report, from the line's own measurements (phone.latency, phone.barge_in)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from lab.evaluation.evaluator import EVALUATOR_VERSION
from lab.events import store
from lab.events.chain import EventChain
from lab.events.types import (
    AgentUtterance,
    CallerUtterance,
    Channel,
    EventPayload,
    Mode,
    PhoneBargeIn,
    PhoneLatency,
    RunEnded,
    RunStarted,
)
from lab.policy.gate import GATE_VERSION
from lab.reports.export import report_bytes
from lab.reports.services import report_for_run
from lab.runs.ownership import OWNER_SESSION_KEY, owner_token_new
from lab.runs.services import run_start
from lab.scenarios.catalog import contract_get
from lab.scripted.dialogue import AGENT_VERSION
from lab.web.waterfall import waterfalls
from tests.web.test_waterfall import bar, chain, waterfall_count

CUT = PhoneBargeIn(into_ms=1240, late_ms=40, response_ms=380, talk_over_ms=380, cleared=True)
CALL: list[EventPayload] = [
    CallerUtterance(text="Book me something Tuesday morning, please.", source="typed"),
    PhoneLatency(latency_ms=1650),
    AgentUtterance(text="I have Tuesday at 9 AM.", purpose="readback", duration_ms=1500),
    CUT,
]


def test_a_phone_reply_and_a_barge_in_each_draw_their_own_axis() -> None:
    events = chain(*CALL)
    reply, cut = waterfalls(events)
    assert (reply.kind, reply.caller_event_id, reply.total_ms) == ("turn", events[0].id, 1650)
    assert bar(reply, "agent").ms == 1650 and bar(reply, "agent").width_pct == 100
    assert (cut.kind, cut.caller_event_id, cut.total_ms) == ("interruption", events[2].id, 380)
    assert bar(cut, "agent").text == "until the bot's clear" and bar(cut, "heard").ms == 380
    assert all(0 <= b.offset_pct <= 100 and b.offset_pct + b.width_pct <= 101 for b in cut.bars)


@pytest.fixture
def finished_phone_run(client):
    owner = owner_token_new()
    session = client.session
    session[OWNER_SESSION_KEY] = owner
    session.save()
    run = run_start(
        scenario_id="interruption", mode=Mode.GUARDED, channel=Channel.TYPED, owner_token=owner
    )
    run.agent_connector = "twilio"
    run.save(update_fields=["agent_connector"])
    contract = contract_get("interruption")
    started = RunStarted(
        run_id=str(run.id),
        scenario_id=contract.id,
        scenario_version=contract.version,
        contract_hash=contract.contract_hash,
        mode=Mode.GUARDED,
        channel=Channel.TYPED,
        evaluator_version=EVALUATOR_VERSION,
        gate_version=GATE_VERSION,
        agent_version=AGENT_VERSION,
    )
    log, now = EventChain(), timezone.now()
    ended = RunEnded(reason_kind="completed", reason="the caller hung up")
    for index, payload in enumerate([started, *CALL, ended]):
        store.event_append(run=run, event=log.append(payload, at=now + timedelta(seconds=index)))
    store.run_mark_ended(run=run)
    return run


@pytest.mark.django_db
def test_the_run_page_and_the_checked_report_draw_a_phone_runs_waterfalls(
    client, finished_phone_run
):
    page = client.get(reverse("run_page", args=[finished_phone_run.id])).content.decode()
    assert 'id="phone-latency"' in page and waterfall_count(page) == 2
    assert "<strong>380 ms</strong> caller's first voiced sample over the bot" in page
    raw = report_bytes(report_for_run(finished_phone_run))
    files = {"report": SimpleUploadedFile("phone.json", raw, content_type="application/json")}
    result = client.post(reverse("report_create"), files).content.decode()
    assert 'id="report-latency"' in result and waterfall_count(result) == 2
