"""The voice socket paces caller frames as they arrive, whether the server is loading its speech
models or not: a flood is closed with 4429 while a cold server still loads, and the log keeps
the refusal after run.started; a real-time stream meanwhile is kept. The speech is stand-ins."""

from __future__ import annotations

import asyncio
import time

import pytest
from channels.db import database_sync_to_async

from lab.events import store
from lab.runs import turn_taking
from lab.runs.voice import VoiceLink
from lab.speech import service
from tests.web.test_voice_consumer import FLOOD_FRAMES, SILENCE, close_of, ended_log, open_call

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def loading(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """The speech models load until the test sets the event; the agent's voice is silence."""
    loaded = asyncio.Event()

    async def warm() -> None:
        await loaded.wait()

    async def synthesize(text: str) -> bytes:
        return SILENCE * 10

    async def probability(pcm: bytes) -> float:
        return 0.3

    monkeypatch.setattr(service, "warm", warm)
    monkeypatch.setattr(service, "synthesize", synthesize)
    monkeypatch.setattr(turn_taking, "turn_probability", probability)
    return loaded


def too_fast(events) -> bool:
    return any(e.type == "input.rejected" and e.payload.reason_kind == "too_fast" for e in events)


async def test_a_flood_while_the_models_load_is_closed_and_logged_after_the_start(loading):
    run, call = await open_call()
    for _ in range(FLOOD_FRAMES):
        await call.communicator.send_to(bytes_data=SILENCE)
    assert await close_of(call) == {"type": "websocket.close", "code": 4429}
    # Decided on the audio's arrival: the models never finished loading before the close.
    assert not loading.is_set()
    loading.set()
    # The hang-up queues behind the flood's unread frames: time to read them, then end the run.
    await call.communicator.disconnect(timeout=60)
    events = await ended_log(run)
    types = [e.type for e in events]
    assert types[0] == "run.started" and types[-1] == "run.ended"
    assert too_fast(events)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_frames_streamed_in_real_time_while_the_models_load_are_kept(loading):
    run, call = await open_call()
    await call.stream(SILENCE * 100)
    loading.set()
    await call.stream(SILENCE * 50)
    events = await database_sync_to_async(store.run_events)(run)
    await call.communicator.disconnect()
    assert events[0].type == "run.started" and not too_fast(events)
    assert events[-1].type != "run.ended"


async def test_a_server_stall_is_not_blamed_on_the_client(loading):
    loading.set()
    run, call = await open_call()
    await call.until(run, lambda e: e.type == "agent.utterance")
    await call.stream(SILENCE * 50)
    # The event loop blocks for 4 s; the client's 4 s of frames then reach the server together.
    time.sleep(4.0)  # noqa: ASYNC251 (the stall under test)
    for _ in range(200):
        await call.communicator.send_to(bytes_data=SILENCE)
    await call.stream(SILENCE * 50)
    events = await database_sync_to_async(store.run_events)(run)
    await call.communicator.disconnect()
    assert not too_fast(events) and events[-1].type != "run.ended"


async def test_a_flood_is_closed_while_the_voice_path_is_behind(loading, monkeypatch):
    """A busy core: the voice path takes each frame late; the flood is still judged on arrival."""
    loading.set()
    behind = asyncio.Event()
    push = VoiceLink.push_mic

    async def late(self: VoiceLink, data: bytes) -> None:
        await behind.wait()
        await push(self, data)

    monkeypatch.setattr(VoiceLink, "push_mic", late)
    run, call = await open_call()
    await call.until(run, lambda e: e.type == "agent.utterance")
    for _ in range(FLOOD_FRAMES):
        await call.communicator.send_to(bytes_data=SILENCE)
    assert await close_of(call) == {"type": "websocket.close", "code": 4429}
    behind.set()
    # The hang-up queues behind the flood's unread frames: time to read them, then end the run.
    await call.communicator.disconnect(timeout=60)
    assert too_fast(await ended_log(run))
