from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from lab.asgi import application
from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events import store
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.scenarios.catalog import all_contracts, contract_get
from lab.web.live import REGISTRY
from lab.web.management.headless import play_headless
from tests.web.owners import owner_cookie

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = [(b"origin", b"http://127.0.0.1")]


async def start(scenario_id: str, mode: Mode = Mode.GUARDED):
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=mode, channel=Channel.TYPED
    )
    headers = [*ORIGIN, await owner_cookie()]
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.id}/", headers=headers)
    connected, _ = await communicator.connect()
    assert connected
    return run, communicator


async def events_of(run):
    return await database_sync_to_async(store.run_events)(run)


async def drain_until(communicator, needle: str) -> str:
    while True:
        # Generous: on PostgreSQL with a loaded machine a fragment can take well over 10 s.
        message = await communicator.receive_from(timeout=60)
        if needle in message:
            return message


async def verdict_of(run):
    events = await events_of(run)
    return evaluate(contract_get(run.scenario_id), events), events


@pytest.mark.parametrize("scenario_id", sorted(all_contracts()))
async def test_the_scripted_caller_passes_every_scenario_when_guarded(fast_clock, scenario_id):
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=Mode.GUARDED, channel=Channel.TYPED
    )
    await play_headless(run)
    evaluation, events = await verdict_of(run)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    assert events[-1].payload.reason_kind == "completed"


@pytest.mark.parametrize("scenario_id", sorted(all_contracts()))
async def test_the_scripted_caller_fails_every_scenario_when_unguarded(fast_clock, scenario_id):
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=Mode.UNGUARDED, channel=Channel.TYPED
    )
    await play_headless(run)
    evaluation, events = await verdict_of(run)
    assert evaluation.verdict is Verdict.FAIL, evaluation.reason
    contradicted = [a for a in evaluation.assertions if a.contradicting]
    assert contradicted, "a FAIL must name the contradicting events"
    known = {event.id for event in events}
    assert all(set(a.contradicting) <= known for a in contradicted)
    assert not any(event.type == "gate.decision" for event in events)


async def test_a_confirmation_with_nothing_proposed_is_blocked_and_explained(fast_clock):
    run, communicator = await start("correction")
    await communicator.send_to(text_data=json.dumps({"action": "say", "text": "Yes, book it."}))
    await drain_until(communicator, "no_proposal")
    await communicator.disconnect()
    events = await events_of(run)
    decisions = [e.payload for e in events if e.type == "gate.decision"]
    assert [(d.outcome, d.reason_kind) for d in decisions] == [("block", "no_proposal")]
    assert not any(e.type.startswith("tool.commit") for e in events)
    assert any(e.type == "agent.utterance" and "nothing waiting" in e.payload.text for e in events)


async def test_a_typed_conversation_books_the_corrected_slot(fast_clock):
    run, communicator = await start("correction")
    for text, wait_for in [
        ("I'd like an appointment on Tuesday morning.", "Shall I book it?"),
        ("Actually, make that Friday afternoon.", "Friday at 2:30 PM"),
        ("Yes, book it.", "Your reference is"),
    ]:
        # Like a polite caller, answer only once the agent has finished talking.
        await drain_until(communicator, 'data-speaking="false"')
        await communicator.send_to(text_data=json.dumps({"action": "say", "text": text}))
        await drain_until(communicator, wait_for)
    await communicator.send_to(text_data=json.dumps({"action": "end"}))
    await drain_until(communicator, 'data-final="true"')
    await communicator.disconnect()
    evaluation, events = await verdict_of(run)
    receipts = [e.payload for e in events if e.type == "tool.commit.succeeded"]
    assert [r.receipt.args["slot_id"] for r in receipts] == ["fri-1430"]
    assert evaluation.verdict is Verdict.PASS


@pytest.mark.parametrize(
    ("frame", "kind"),
    [
        ("{not json", "malformed_json"),
        (json.dumps({"action": "dance"}), "invalid_message"),
        (json.dumps({"action": "say", "text": ""}), "invalid_message"),
        (json.dumps({"action": "say", "text": "x" * 301}), "invalid_message"),
        (json.dumps({"action": "say", "text": "y" * 5000}), "oversized_message"),
    ],
)
async def test_bad_messages_get_a_clear_error_and_an_event(fast_clock, frame, kind):
    run, communicator = await start("no_confirmation")
    await communicator.send_to(text_data=frame)
    notice = await drain_until(communicator, 'id="notice"')
    assert "Not accepted" in notice
    await communicator.send_to(text_data=json.dumps({"action": "say", "text": "Hello?"}))
    await drain_until(communicator, "didn&#x27;t catch that")
    await communicator.disconnect()
    events = await events_of(run)
    rejected = [e.payload for e in events if e.type == "input.rejected"]
    assert [r.reason_kind for r in rejected] == [kind]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_audio_on_a_typed_run_is_refused_not_dropped(fast_clock):
    run, communicator = await start("no_confirmation")
    await communicator.send_to(bytes_data=b"\x00" * 640)
    await drain_until(communicator, "Not accepted")
    await communicator.disconnect()
    events = await events_of(run)
    assert any(e.type == "input.rejected" for e in events)


async def test_an_unknown_run_closes_with_a_not_found_code():
    communicator = WebsocketCommunicator(
        application, "/ws/runs/00000000-0000-0000-0000-000000000000/", headers=ORIGIN
    )
    connected, _ = await communicator.connect()
    assert connected
    message = await communicator.receive_from()
    assert "no run with this id" in message
    closed = await communicator.receive_output()
    assert closed == {"type": "websocket.close", "code": 4404}
    await communicator.disconnect()


async def test_a_caller_who_leaves_halfway_gets_no_pass(fast_clock):
    run, communicator = await start("double_confirmation")
    await communicator.send_to(
        text_data=json.dumps({"action": "say", "text": "I'd like Thursday morning, please."})
    )
    await drain_until(communicator, "Shall I book it?")
    await communicator.disconnect()
    evaluation, events = await verdict_of(run)
    assert events[-1].payload.reason_kind == "caller_left"
    assert evaluation.verdict is Verdict.INCONCLUSIVE


async def test_an_ended_run_cannot_be_driven_again(fast_clock):
    run, communicator = await start("no_confirmation")
    await communicator.send_to(text_data=json.dumps({"action": "end"}))
    await drain_until(communicator, 'data-final="true"')
    await communicator.disconnect()
    again = WebsocketCommunicator(
        application, f"/ws/runs/{run.id}/", headers=[*ORIGIN, await owner_cookie()]
    )
    await again.connect()
    assert "has ended" in await again.receive_from()
    assert (await again.receive_output())["code"] == 4410
    await again.disconnect()


async def test_unguarded_runs_never_share_execution_keys(fast_clock):
    executions = []
    for _ in range(2):
        run = await database_sync_to_async(run_start)(
            scenario_id="double_confirmation", mode=Mode.UNGUARDED, channel=Channel.TYPED
        )
        await play_headless(run)
        events = await events_of(run)
        executions.append([e.payload.replayed for e in events if e.type == "tool.commit.succeeded"])
    assert executions == [[False, False], [False, False]]


async def test_the_page_says_listening_only_once_the_agents_speech_has_run_out(settings):
    """The greeting takes seconds to say: "listening" must wait for its end on the timeline."""
    settings.LAB_TIME_SCALE = 1.0
    run, communicator = await start("correction")
    speaking = await drain_until(communicator, 'data-speaking="true"')
    assert "a line sent now interrupts it" in speaking
    await drain_until(communicator, 'data-speaking="false"')
    live = REGISTRY.runs[str(run.id)]
    greeting = next(e for e in live.session.events if e.type == "agent.utterance")
    [said] = [item for item in live.session.timeline.queue if item.event_id == greeting.id]
    assert said.duration > 1.0  # seconds of speech, so a premature "listening" shows
    assert live.session.now() >= said.end
    await communicator.disconnect()


async def test_a_typed_caller_is_told_when_the_agent_speaks_and_when_it_listens(fast_clock):
    _run, communicator = await start("correction")
    speaking = await drain_until(communicator, 'data-speaking="true"')
    assert 'data-speaking="true"' in speaking
    listening = await drain_until(communicator, 'data-speaking="false"')
    assert "The agent is listening." in listening
    await communicator.disconnect()


async def test_a_typed_acknowledgement_over_the_greeting_is_a_backchannel_not_a_turn(settings):
    # Slow enough that the greeting is still being said when the line arrives, however loaded.
    settings.LAB_TIME_SCALE = 5.0
    run, communicator = await start("correction")
    await drain_until(communicator, 'data-speaking="true"')
    await communicator.send_to(text_data=json.dumps({"action": "say", "text": "Okay."}))
    heard = ("caller.backchannel", "caller.utterance", "agent.interrupted")
    for _ in range(300):
        events = await events_of(run)
        if any(e.type in heard for e in events):
            break
        await asyncio.sleep(0.1)
    await communicator.disconnect()
    types = [e.type for e in events]
    assert "caller.backchannel" in types
    assert "caller.utterance" not in types and "agent.interrupted" not in types


class _WakesLate:
    """asyncio as the scripted caller sees it on a stalled loop: every sleep ends late."""

    def __init__(self, late_s: float) -> None:
        self.late_s = late_s

    def __getattr__(self, name: str):
        return getattr(asyncio, name)

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(delay + self.late_s)


@pytest.mark.parametrize("scenario_id", ["interruption", "backchannel_readback"])
async def test_a_scripted_barge_in_lands_where_the_script_puts_it_on_a_late_loop(
    fast_clock, monkeypatch, scenario_id
):
    # Late by more than the whole readback (a few seconds at a tenth of real time): judged at
    # arrival, the line came after the readback ended and interrupted nothing.
    monkeypatch.setattr("lab.runs.caller.asyncio", _WakesLate(late_s=1.5))
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=Mode.GUARDED, channel=Channel.TYPED
    )
    await play_headless(run)
    evaluation, events = await verdict_of(run)
    assert evaluation.verdict is Verdict.PASS, evaluation.reason
    line = next(c for c in contract_get(scenario_id).caller if c.into_readback_ms is not None)
    over = [e for e in events if e.type in ("agent.interrupted", "caller.backchannel")]
    assert over, "the barge-in line met no readback"
    cut = next((e.payload for e in over if e.type == "agent.interrupted"), None)
    if cut is not None:
        assert abs(cut.heard_ms - line.into_readback_ms) <= 100
