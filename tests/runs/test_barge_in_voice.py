"""Barge-in without headphones, through the real consumer and voice path: the agent's own
synthesized audio, attenuated and delayed as a room would, is mixed into the mic frames."""

from __future__ import annotations

import asyncio
from collections import deque

import numpy as np
import pytest
from channels.db import database_sync_to_async

from lab.audio.frames import FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, split_frames
from lab.events import store
from lab.runs.voice import AGENT_AUDIO, STOP_AUDIO
from lab.speech import tts
from tests.web.test_voice_consumer import SILENCE, Call, open_call

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.models]


class EchoingCall(Call):
    """A client without headphones: its speaker plays the agent, its mic hears that again."""

    def __init__(self, call: Call, *, delay_ms: int, gain: float) -> None:
        super().__init__(call.communicator)
        self.delay_s, self.gain = delay_ms / 1000, gain
        # When the server sent each binary message: a browser's player starts a chunk when it
        # arrives, which is when it was sent here (one process, no network), not when a loaded
        # loop gets round to this client's reading it.
        self.sent_at: deque[float | None] = deque()
        queue = call.communicator.output_queue
        self.sent_at.extend(None for m in list(queue._queue) if m.get("bytes") is not None)
        put = queue.put_nowait

        def stamped(message: dict) -> None:
            if message.get("bytes") is not None:
                self.sent_at.append(asyncio.get_running_loop().time())
            put(message)

        queue.put_nowait = stamped  # type: ignore[method-assign]
        self.playout: list[tuple[str, float, np.ndarray]] = []
        self.play_end = 0.0
        self.counted = 0
        # Where the mic's own clock is: the capture time of the next frame. A browser's mic
        # captures from the call's first frame on, whatever its page is doing: a loop that gets
        # to sending late sends the frames it holds in a burst, it never skips audio.
        self.mic_at: float | None = None

    async def pump(self, wait_s: float = 0.01) -> None:
        await super().pump(wait_s)
        self._play()

    def _take_sent(self) -> None:
        """What the server has sent so far, taken without waiting (a late mic must hear the
        agent audio sent before each frame's capture time, not only what a pump got to)."""
        queue = self.communicator.output_queue
        while not queue.empty():
            message = queue.get_nowait()
            if message.get("bytes") is not None:
                self.audio.append(message["bytes"])
            elif message.get("text") is not None:
                self.html.append(message["text"])
        self._play()

    def _play(self) -> None:
        now = asyncio.get_running_loop().time()
        for data in self.audio[self.counted :]:
            utterance_id = data[1:9].decode().strip()
            sent = self.sent_at.popleft() if self.sent_at else None
            arrived = now if sent is None else sent
            if data[0] == AGENT_AUDIO:
                samples = np.frombuffer(data[9:], "<i2").astype(np.float64)
                start = max(arrived, self.play_end)
                self.playout.append((utterance_id, start, samples))
                self.play_end = start + len(samples) / SAMPLE_RATE
            elif data[0] == STOP_AUDIO:
                # The player drops what it had not played yet.
                self.playout = [
                    (
                        u,
                        s,
                        x[: max(0, round((arrived - s) * SAMPLE_RATE))] if u == utterance_id else x,
                    )
                    for u, s, x in self.playout
                ]
                self.play_end = min(self.play_end, arrived)
        self.counted = len(self.audio)

    async def until(self, run, predicate, limit_s: float = 30.0):
        """Like Call.until, but the mic keeps streaming while the log is read, as a browser's does
        (a mic that pauses for each read would shift its timing against the agent's audio)."""
        done = asyncio.Event()

        async def keep_streaming() -> None:
            while not done.is_set():
                await self.stream(SILENCE * 5)

        streaming = asyncio.ensure_future(keep_streaming())
        try:
            async with asyncio.timeout(limit_s):
                while True:
                    events = await database_sync_to_async(store.run_events)(run)
                    if found := [e for e in events if predicate(e)]:
                        return found
                    await asyncio.sleep(0.1)
        finally:
            done.set()
            await streaming

    def echo(self, at: float) -> np.ndarray:
        """What the mic picks up of the speaker during the frame that starts at `at`."""
        out = np.zeros(FRAME_SAMPLES)
        heard_from = at - self.delay_s
        for _, start, samples in self.playout:
            first = round((heard_from - start) * SAMPLE_RATE)
            lo, hi = max(0, first), min(len(samples), first + FRAME_SAMPLES)
            if lo < hi:
                out[lo - first : hi - first] += samples[lo:hi]
        return out * self.gain

    async def stream(self, pcm: bytes) -> None:
        loop = asyncio.get_running_loop()
        if self.mic_at is None:
            self.mic_at = loop.time()
        for frame in split_frames(pcm):
            self._take_sent()
            # Each frame holds what the room sounded like at its own place on the mic's clock,
            # however late a loaded loop gets to send it: a real mic captures continuously and
            # delivers late frames in a burst. Mixing the echo in at the moment of sending
            # instead made a stalled loop repeat the same instant of the agent's audio over
            # several frames, which matches the agent's voice no more than a caller does.
            mic = np.frombuffer(frame.pcm, "<i2") + self.echo(self.mic_at)
            await self.communicator.send_to(
                bytes_data=np.clip(mic, -32768, 32767).astype("<i2").tobytes()
            )
            self.mic_at += FRAME_MS / 1000
            # Never ahead of real time, even when many messages arrive at once.
            while loop.time() < self.mic_at:
                await self.pump(wait_s=max(0.001, self.mic_at - loop.time()))


async def echoing_call(delay_ms: int, gain: float = 0.25):
    """A call whose greeting has begun; no frames are sent before, while the models load
    (frames queued behind the loading would reach the pacer as one burst)."""
    run, call = await open_call()
    echoing = EchoingCall(call, delay_ms=delay_ms, gain=gain)
    for _ in range(600):
        events = await database_sync_to_async(store.run_events)(run)
        if any(e.type == "agent.audio_started" for e in events):
            return run, echoing
        await echoing.pump(wait_s=0.1)
    raise AssertionError("the greeting never started")


async def events_of(run):
    return await database_sync_to_async(store.run_events)(run)


@pytest.mark.parametrize("delay_ms", [60, 240])
async def test_the_agents_own_voice_in_the_mic_does_not_cut_it(delay_ms):
    run, call = await echoing_call(delay_ms)
    # The greeting plays out with the mic open; only its echo reaches the mic.
    await call.until(run, lambda e: e.type == "voice.echo_ignored")
    await call.hear_out(run)
    # The echo's own segment is transcribed, and then kept from the agent.
    await call.until(run, lambda e: e.type == "asr.transcribed")
    await call.stream(SILENCE * 25)
    events = await events_of(run)
    await call.communicator.disconnect()
    types = [e.type for e in events]
    assert "vad.speech_started" in types
    ignored = next(e.payload for e in events if e.type == "voice.echo_ignored")
    greeting = next(e for e in events if e.type == "agent.utterance")
    assert ignored.during_utterance_event_id == greeting.id and ignored.score >= 0.9
    assert "agent.interrupted" not in types
    # Whatever the echo transcribed to, it never became the caller's turn.
    assert "caller.utterance" not in types


async def test_a_caller_speaking_over_the_echo_still_interrupts():
    run, call = await echoing_call(150)
    await call.stream(SILENCE * 25)
    await call.stream(tts.synthesize("Wait, no. Friday morning instead.") + SILENCE * 40)
    cut = await call.until(run, lambda e: e.type == "agent.interrupted")
    events = await events_of(run)
    await call.communicator.disconnect()
    cause = next(e for e in events if e.id == cut[0].payload.cause_event_id)
    assert cause.type == "vad.speech_started"
