from __future__ import annotations

import asyncio
import json
import time

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from lab.asgi import application
from lab.audio.frames import FRAME_BYTES, FRAME_MS, split_frames
from lab.events import store
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.runs.voice import AGENT_AUDIO, STOP_AUDIO
from lab.speech import tts
from lab.speech.service import sentence_pcm
from tests.web.owners import owner_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.models]

ORIGIN = [(b"origin", b"http://127.0.0.1")]
SILENCE = bytes(FRAME_BYTES)
# A flood: 20 s of audio sent at once. The server refuses a client 3 s ahead of real time, so it
# sees this one whenever it reads the frames faster than 17 ms each; with only 4 s (200 frames)
# it had to read them all within 1 s of the first, which a loaded core does not.
FLOOD_FRAMES = 1000


class Call:
    """A voice client: streams PCM like a microphone and collects what the server sends."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.communicator = communicator
        self.audio: list[bytes] = []
        self.html: list[str] = []

    async def pump(self, wait_s: float = 0.01) -> None:
        # receive_output's own timeout would cancel the application, so wait politely first.
        while not await self.communicator.receive_nothing(timeout=wait_s, interval=0.005):
            message = await self.communicator.receive_output()
            wait_s = 0.001
            if message.get("bytes") is not None:
                self.audio.append(message["bytes"])
            elif message.get("text") is not None:
                self.html.append(message["text"])
            else:
                return

    async def stream(self, pcm: bytes) -> None:
        """Send PCM in 20 ms frames at the pace a microphone would."""
        loop = asyncio.get_running_loop()
        next_at = loop.time()
        for frame in split_frames(pcm):
            await self.communicator.send_to(bytes_data=frame.pcm)
            next_at += FRAME_MS / 1000
            await self.pump(wait_s=max(0.001, next_at - loop.time()))

    async def hear_out(self, run) -> None:
        """Keep the microphone open (silent) until the agent's audio so far has played."""
        await self.until(run, lambda e: e.type == "agent.audio_started")
        await self.pump(wait_s=0.5)
        seconds = sum(len(a) - 9 for a in self.audio if a[0] == AGENT_AUDIO) / 32000
        await self.stream(SILENCE * round(seconds * 1000 / FRAME_MS))

    async def until(self, run, predicate, limit_s: float = 30.0):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit_s
        while loop.time() < deadline:
            events = await database_sync_to_async(store.run_events)(run)
            if found := [e for e in events if predicate(e)]:
                return found
            await self.stream(SILENCE * 10)
        raise AssertionError(
            f"never came: {[e.payload for e in events if e.type == 'input.rejected'][:2]}"
        )


async def open_call(scenario_id: str = "correction"):
    run = await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=Mode.GUARDED, channel=Channel.VOICE
    )
    headers = [*ORIGIN, await owner_cookie()]
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.id}/", headers=headers)
    connected, _ = await communicator.connect(timeout=30)
    assert connected
    return run, Call(communicator)


def speech(text: str) -> bytes:
    return tts.synthesize(text) + SILENCE * 40


async def close_of(call: Call) -> dict:
    """What the server sent until it closed the socket: the close message."""
    while (message := await call.communicator.receive_output(timeout=30))["type"] != (
        "websocket.close"
    ):
        pass
    return message


async def ended_log(run, limit_s: float = 60.0):
    """The run's log once it holds run.ended: a closed socket's run ends behind it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while True:
        events = await database_sync_to_async(store.run_events)(run)
        if events and events[-1].type == "run.ended":
            return events
        assert loop.time() < deadline, f"never ended: {[e.type for e in events][-5:]}"
        await asyncio.sleep(0.05)


async def test_spoken_pcm_frames_become_a_transcribed_turn_with_a_latency_chain():
    run, call = await open_call()
    await call.hear_out(run)
    await call.stream(speech("I'd like an appointment on Tuesday morning."))
    await call.until(run, lambda e: e.type == "turn.latency")
    readbacks = await call.until(
        run, lambda e: e.type == "agent.utterance" and e.payload.purpose == "readback"
    )
    events = await database_sync_to_async(store.run_events)(run)
    await call.communicator.disconnect()
    types = [e.type for e in events]
    assert types.index("vad.speech_started") < types.index("vad.speech_ended")
    transcript = next(e.payload for e in events if e.type == "asr.transcribed")
    assert "tuesday" in transcript.text.lower()
    said = next(e.payload for e in events if e.type == "caller.utterance")
    assert said.source == "asr"
    latency = next(e.payload for e in events if e.type == "turn.latency")
    assert latency.endpointing_ms > 0 and latency.recognition_ms > 0
    assert latency.total_ms >= latency.endpointing_ms + latency.recognition_ms
    # Timed from Silero's speech end (it runs beside webrtcvad), not the loudness alone.
    assert latency.voice_end_clock == "silero_vad" and latency.voice_to_voice_ms > 0
    agent_frames = [a for a in call.audio if a[0] == AGENT_AUDIO]
    assert agent_frames and all(len(a) > 9 and (len(a) - 9) % 2 == 0 for a in agent_frames)
    assert readbacks[0].payload.text.startswith("I have Tuesday")


async def test_speaking_over_the_readback_stops_the_audio_and_expires_the_proposal():
    run, call = await open_call()
    await call.hear_out(run)
    await call.stream(speech("I'd like an appointment on Tuesday morning."))
    readback = (
        await call.until(
            run, lambda e: e.type == "agent.utterance" and e.payload.purpose == "readback"
        )
    )[0]
    await call.until(
        run,
        lambda e: e.type == "agent.audio_started" and e.payload.utterance_event_id == readback.id,
    )
    await call.stream(speech("Wait, no. Friday morning instead."))
    await call.until(run, lambda e: e.type == "proposal.expired")
    events = await database_sync_to_async(store.run_events)(run)
    await call.communicator.disconnect()
    cut = next(
        e.payload
        for e in events
        if e.type == "agent.interrupted" and e.payload.utterance_event_id == readback.id
    )
    assert events[[e.id for e in events].index(cut.cause_event_id)].type == "vad.speech_started"
    expired = next(e.payload for e in events if e.type == "proposal.expired")
    assert expired.reason_kind == "interrupted"
    stops = [a for a in call.audio if a[0] == STOP_AUDIO]
    assert any(a[1:9].decode() == readback.id for a in stops)


async def test_the_browser_report_of_played_audio_is_recorded():
    run, call = await open_call()
    greeting = (await call.until(run, lambda e: e.type == "agent.audio_started"))[0]
    utterance_id = greeting.payload.utterance_event_id
    await call.communicator.send_to(
        text_data=json.dumps(
            {
                "action": "played",
                "utterance_event_id": utterance_id,
                "played_ms": 1200,
                "total_ms": 3400,
            }
        )
    )
    played = await call.until(run, lambda e: e.type == "agent.audio_played")
    await call.communicator.disconnect()
    assert (played[0].payload.played_ms, played[0].payload.total_ms) == (1200, 3400)


@pytest.mark.parametrize(
    ("frame", "kind"),
    [(b"\x01" * 101, "odd_length"), (b"\x00" * 320, "wrong_size"), (b"\x00" * 1280, "too_large")],
)
async def test_malformed_frames_are_refused_with_a_reason_and_an_event(frame, kind):
    run, call = await open_call()
    await call.communicator.send_to(bytes_data=frame)
    rejected = await call.until(run, lambda e: e.type == "input.rejected")
    await call.communicator.disconnect()
    assert rejected[0].payload.reason_kind == kind
    assert any("Not accepted" in html for html in call.html)


async def test_frames_faster_than_real_time_close_the_call_and_keep_the_log():
    run, call = await open_call()
    for _ in range(FLOOD_FRAMES):
        await call.communicator.send_to(bytes_data=SILENCE)
    assert await close_of(call) == {"type": "websocket.close", "code": 4429}
    # The hang-up queues behind the flood's unread frames: time to read them, then end the run.
    await call.communicator.disconnect(timeout=60)
    events = await ended_log(run)
    assert any(e.type == "input.rejected" and e.payload.reason_kind == "too_fast" for e in events)
    assert events[-1].type == "run.ended"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_a_caller_who_vanishes_mid_utterance_leaves_a_kept_log():
    run, call = await open_call()
    await call.until(run, lambda e: e.type == "agent.audio_started")
    pcm = tts.synthesize("I'd like an appointment on Tuesday morning.")
    await call.stream(SILENCE * 10 + pcm[: len(pcm) // 2])
    await call.communicator.disconnect()
    events = await database_sync_to_async(store.run_events)(run)
    assert events[-1].type == "run.ended"
    assert events[-1].payload.reason_kind == "caller_left"
    assert "vad.speech_started" in [e.type for e in events]


async def test_a_server_stall_while_frames_are_in_flight_is_not_blamed_on_the_client():
    run, call = await open_call()
    await call.until(run, lambda e: e.type == "agent.audio_started")
    await call.stream(SILENCE * 50)
    # The server's event loop blocks for 4 s; the client meanwhile goes on sending in real
    # time, so those 4 s of frames reach the server together once it runs again.
    time.sleep(4.0)  # noqa: ASYNC251 (the stall under test)
    for _ in range(200):
        await call.communicator.send_to(bytes_data=SILENCE)
    await call.stream(SILENCE * 50)
    events = await database_sync_to_async(store.run_events)(run)
    await call.communicator.disconnect()
    assert not any(
        e.type == "input.rejected" and e.payload.reason_kind == "too_fast" for e in events
    )
    assert events[-1].type != "run.ended"


class ReportingBrowser(Call):
    """A voice client that reports each agent utterance once it has played it through."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        super().__init__(communicator)
        self.playing: dict[str, tuple[float, int]] = {}
        self.reported: set[str] = set()
        self._counted = 0

    async def pump(self, wait_s: float = 0.01) -> None:
        await super().pump(wait_s)
        loop = asyncio.get_running_loop()
        for data in self.audio[self._counted :]:
            utterance_id = data[1:9].decode().strip()
            if data[0] == AGENT_AUDIO:
                first, samples = self.playing.get(utterance_id, (loop.time(), 0))
                self.playing[utterance_id] = (first, samples + (len(data) - 9) // 2)
        self._counted = len(self.audio)
        for utterance_id, (first, samples) in self.playing.items():
            if utterance_id not in self.reported and loop.time() >= first + samples / 16000:
                self.reported.add(utterance_id)
                played_ms = samples * 1000 // 16000
                await self.communicator.send_to(
                    text_data=json.dumps(
                        {
                            "action": "played",
                            "utterance_event_id": utterance_id,
                            "played_ms": played_ms,
                            "total_ms": played_ms,
                        }
                    )
                )


async def test_a_voice_run_ends_only_once_the_agents_last_words_are_sent_and_played():
    run, call = await open_call("double_confirmation")
    communicator = call.communicator
    browser = ReportingBrowser(communicator)
    await communicator.send_to(text_data=json.dumps({"action": "play"}))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 240
    events = []
    while loop.time() < deadline:
        await browser.pump(wait_s=0.2)
        events = await database_sync_to_async(store.run_events)(run)
        if events and events[-1].type == "run.ended":
            break
    await browser.pump(wait_s=0.5)
    await communicator.disconnect()
    assert events[-1].type == "run.ended"
    assert events[-1].payload.reason == "the scripted caller finished"
    last = [e for e in events if e.type == "agent.utterance"][-1]
    assert last.payload.purpose == "receipt"
    # Every sentence of the receipt (its reference number last) reached the browser...
    sent = sum(
        len(a) - 9 for a in browser.audio if a[0] == AGENT_AUDIO and a[1:9] == last.id.encode()
    )
    assert sent == sum(len(sentence_pcm(s)) for s in tts.chunks(last.payload.text))
    # ...and the browser's report of playing it is part of the evidence.
    played = [e.payload for e in events if e.type == "agent.audio_played"]
    assert any(p.utterance_event_id == last.id and p.played_ms == p.total_ms for p in played)
