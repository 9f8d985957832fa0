"""The latency waterfall: one axis per turn, from the log alone, on every page that shows a run."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from lab.evaluation.evaluator import EVALUATOR_VERSION
from lab.events import store
from lab.events.chain import EventChain
from lab.events.types import (
    Channel,
    EventPayload,
    Mode,
    RunEnded,
    RunStarted,
    SpeechEnded,
    SpeechStarted,
    TurnCandidate,
    TurnDecided,
    TurnLatency,
)
from lab.policy.gate import GATE_VERSION
from lab.reports.export import report_bytes
from lab.reports.models import ImportedReport
from lab.reports.services import report_for_run
from lab.runs.ownership import OWNER_SESSION_KEY, owner_token_new
from lab.runs.services import run_start
from lab.scenarios.catalog import contract_get
from lab.scripted.dialogue import AGENT_VERSION
from lab.web.waterfall import MARKER_PCT, waterfall, waterfalls

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
# Before turn-taking: the chain alone (a log written before turn.candidate existed).
OLD = TurnLatency(
    caller_event_id="ev-00003",
    endpointing_ms=500,
    recognition_ms=200,
    agent_ms=20,
    synthesis_ms=140,
    total_ms=860,
)
CANDIDATE = TurnCandidate(stream_ms=2400, silence_ms=200)
NEW = TurnLatency(
    caller_event_id="ev-00006",
    endpointing_ms=260,
    recognition_ms=30,
    agent_ms=20,
    synthesis_ms=90,
    total_ms=400,
    decision_ms=60,
    candidate_silence_ms=200,
    recognition_tail_ms=150,
    speculative=True,
    voice_to_voice_ms=520,
)


def chain(*payloads: EventPayload) -> list:
    log = EventChain()
    for index, payload in enumerate(payloads):
        log.append(payload, at=START + timedelta(milliseconds=100 * index))
    return list(log.events)


def decided(candidate_id: str) -> TurnDecided:
    return TurnDecided(
        candidate_event_id=candidate_id,
        complete=True,
        model="smart-turn-v3.2",
        model_probability=0.91,
        transcript_signal="complete",
        silence_ms=260,
        reason="the model and the words agree the turn is over",
    )


def turn_log() -> list:
    """An old-style turn, then one with a candidate and a decision (TT's events)."""
    first = chain(SpeechStarted(stream_ms=1000), SpeechEnded(stream_ms=1800, segment_ms=800), OLD)
    candidate = EventChain(first).append(CANDIDATE, at=START + timedelta(seconds=5))
    rest = EventChain([*first, candidate])
    rest.append(decided(candidate.id), at=START + timedelta(seconds=6))
    rest.append(NEW, at=START + timedelta(seconds=7))
    return list(rest.events)


def bar(turn, label):
    return next(b for b in turn.bars if b.label == label)


def test_an_old_log_draws_the_chain_one_step_after_another() -> None:
    [turn] = waterfalls(chain(OLD))
    labels = [b.label for b in turn.bars]
    assert labels == ["endpointing", "recognition", "agent", "synthesis", "first-audio"]
    assert turn.axis_ms == 860 and turn.decision is None
    assert bar(turn, "recognition").offset_pct == pytest.approx(100 * 500 / 860)
    assert bar(turn, "synthesis").offset_pct == pytest.approx(100 * 720 / 860)
    assert bar(turn, "first-audio").offset_pct == pytest.approx(100 - MARKER_PCT)


def test_candidate_and_decision_share_the_axis_from_the_real_end_of_speech() -> None:
    old, new = waterfalls(turn_log())
    assert old.total_ms == 860
    labels = [b.label for b in new.bars]
    assert labels[:4] == ["heard", "endpointing", "candidate", "decision"]
    # The last loud sample came 120 ms before the last voiced frame: everything shifts by it.
    assert new.axis_ms == 520
    assert bar(new, "heard").offset_pct == 0 and bar(new, "heard").width_pct == 100
    assert bar(new, "candidate").offset_pct == pytest.approx(100 * 320 / 520)
    decision = bar(new, "decision")
    assert (decision.offset_pct, decision.ms) == (pytest.approx(100 * 320 / 520), 60)
    # Recognition began at the candidate, not after the decision.
    assert bar(new, "recognition").offset_pct == pytest.approx(100 * 320 / 520)
    assert bar(new, "first-audio").offset_pct == pytest.approx(100 - MARKER_PCT)
    assert new.decision == (
        "The agent answered after a 260 ms pause: your words were a finished request, "
        "and the turn model put it at 91% that you were done."
    )
    assert all(0 <= b.offset_pct <= 100 and b.offset_pct + b.width_pct <= 101 for b in new.bars)


def test_a_decision_that_waited_is_not_taken_for_the_turns_end() -> None:
    waited = TurnDecided(**{**decided("ev-x").model_dump(), "complete": False})
    [turn] = waterfalls(chain(CANDIDATE, waited, OLD))
    assert [b.label for b in turn.bars][:2] == ["endpointing", "recognition"]
    assert turn.decision is None


@pytest.fixture
def finished_voice_run(client):
    """A voice run whose stored log holds both turns, owned by the test client's session."""
    owner = owner_token_new()
    session = client.session
    session[OWNER_SESSION_KEY] = owner
    session.save()
    run = run_start(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.VOICE, owner_token=owner
    )
    contract = contract_get("correction")
    started = RunStarted(
        run_id=str(run.id),
        scenario_id=contract.id,
        scenario_version=contract.version,
        contract_hash=contract.contract_hash,
        mode=Mode.GUARDED,
        channel=Channel.VOICE,
        evaluator_version=EVALUATOR_VERSION,
        gate_version=GATE_VERSION,
        agent_version=AGENT_VERSION,
    )
    log = EventChain()
    now = timezone.now()
    payloads = [started, *(e.payload for e in turn_log())]
    payloads.append(RunEnded(reason_kind="completed", reason="the caller hung up"))
    for index, payload in enumerate(payloads):
        store.event_append(run=run, event=log.append(payload, at=now + timedelta(seconds=index)))
    store.run_mark_ended(run=run)
    return run


def waterfall_count(html: str) -> int:
    return len(re.findall(r'<div class="waterfall" data-caller-event=', html))


@pytest.mark.django_db
def test_a_finished_run_page_draws_every_turns_waterfall_from_the_log(client, finished_voice_run):
    page = client.get(reverse("run_page", args=[finished_voice_run.id])).content.decode()
    assert waterfall_count(page) == 2
    assert 'data-step="decision"' in page and 'data-step="candidate"' in page
    assert "the turn model put it at 91% that you were done" in page


@pytest.mark.django_db
def test_the_report_check_and_the_replay_draw_the_waterfall(client, finished_voice_run):
    raw = report_bytes(report_for_run(finished_voice_run))
    files = {"report": SimpleUploadedFile("voice.json", raw, content_type="application/json")}
    result = client.post(reverse("report_create"), files).content.decode()
    assert 'id="report-latency"' in result and waterfall_count(result) == 2
    stored = ImportedReport.objects.get()
    replay = client.get(reverse("report_replay", args=[stored.id])).content.decode()
    board = replay.split('<template class="replay-step">')[0]
    assert 'id="replay-latency"' in board and waterfall_count(board) == 2
    steps = re.findall(r'<template class="replay-step">(.*?)</template>', replay, re.S)
    appended = [s for s in steps if 'id="latency" hx-swap-oob="beforeend"' in s]
    assert len(appended) == 2 and 'data-step="decision"' in appended[1]


def test_the_fallback_is_told_in_words_not_as_the_deciders_internals() -> None:
    fallback = TurnDecided(
        candidate_event_id="ev-x",
        complete=True,
        model=None,
        model_probability=None,
        transcript_signal="unknown",
        silence_ms=500,
        reason="silence reached the 500 ms fallback",
    )
    [turn] = waterfalls(chain(CANDIDATE, fallback, NEW))
    assert turn.decision == (
        "The agent waited the full 500 ms pause before answering: "
        "no transcript was ready earlier to judge the words by."
    )
    unfinished = TurnDecided(**{**fallback.model_dump(), "transcript_signal": "incomplete"})
    [turn] = waterfalls(chain(CANDIDATE, unfinished, NEW))
    assert "your words sounded unfinished" in turn.decision
    for text in (turn.decision, *(b.text for b in turn.bars)):
        assert "fallback" not in text and "transcript unknown" not in text


def test_one_labelled_axis_with_the_parts_in_the_order_they_happen() -> None:
    _old, new = waterfalls(turn_log())
    starts = [b.offset_pct for b in new.bars]
    assert starts == sorted(starts)
    assert [t.ms for t in new.ticks] == [0, 200, 400]
    assert all(t.pct == pytest.approx(100 * t.ms / 520) for t in new.ticks)
    [old] = waterfalls(chain(OLD))
    assert [t.ms for t in old.ticks] == [0, 250, 500, 750]
    assert len({b.text for b in new.bars}) == len(new.bars)
    assert all(len(b.text) <= 16 for b in new.bars)  # fits the label column on one line


def _waterfall_html(html: str) -> list[str]:
    return re.findall(r'<div class="waterfall" data-caller-event=.*?\n</div>', html, re.S)


@pytest.mark.django_db
def test_run_page_share_page_report_and_replay_draw_the_same_waterfall(client, finished_voice_run):
    run_page = client.get(reverse("run_page", args=[finished_voice_run.id])).content.decode()
    drawn = _waterfall_html(run_page)
    assert len(drawn) == 2 and 'class="bar-row axis-row"' in drawn[1]
    assert "Time axis: ms from the caller's last voiced sample" in drawn[1]
    shared = client.post(reverse("run_share", args=[finished_voice_run.id])).content.decode()
    share_url = re.search(r'id="share-url">([^<]+)<', shared).group(1)
    share_path = "/" + share_url.split("/", 3)[3]
    assert _waterfall_html(client.get(share_path).content.decode()) == drawn
    raw = report_bytes(report_for_run(finished_voice_run))
    files = {"report": SimpleUploadedFile("voice.json", raw, content_type="application/json")}
    assert _waterfall_html(client.post(reverse("report_create"), files).content.decode()) == drawn
    stored = ImportedReport.objects.get()
    replay = client.get(reverse("report_replay", args=[stored.id])).content.decode()
    assert _waterfall_html(replay.split('<template class="replay-step">')[0]) == drawn


def test_the_wait_says_which_clock_placed_the_end_of_speech() -> None:
    silero = TurnLatency(**{**NEW.model_dump(), "voice_end_clock": "silero_vad"})
    assert bar(waterfall(NEW, None, CANDIDATE), "heard").text == "caller waited"
    assert (
        bar(waterfall(silero, None, CANDIDATE), "heard").text
        == "caller waited (speech end from Silero VAD)"
    )
