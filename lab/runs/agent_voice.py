"""Agent speech out: utterances synthesized chunk by chunk (opening clause first) and sent;
an agent that speaks for itself (a pipecat bot in audio mode) brings its own audio instead.

The first chunk's audio also closes the caller turn's latency chain (turn.latency).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from lab.events.types import AgentAudioPlayed, AgentAudioStarted, AgentUtterance, Event, TurnLatency
from lab.grading.grounding import strip_markers
from lab.runs.barge_in import BargeIn
from lab.runs.log import RunClosed
from lab.runs.session import RunSession
from lab.runs.turn_taking import TurnClock
from lab.speech import service, tts

AGENT_AUDIO = 1
STOP_AUDIO = 2
CALLER_AUDIO = 3
ID_BYTES = 8
BYTES_PER_SECOND = 32000
# How long the end of a call waits for a browser's report of the agent's last words.
PLAYBACK_REPORT_WAIT_S = 3.0

SendBytes = Callable[[bytes], Awaitable[None]]
# An utterance's chunk of audio as sent, and when (loop time) it starts playing.
Recorded = Callable[[str, bytes, float], None]


def audio_message(kind: int, utterance_event_id: str, pcm: bytes = b"") -> bytes:
    """Server-to-browser binary frame: kind byte, 8-byte utterance id, then PCM16 16 kHz."""
    return bytes([kind]) + utterance_event_id.encode("ascii").ljust(ID_BYTES)[:ID_BYTES] + pcm


def _played_report_of(utterance_id: str) -> Callable[[Event], bool]:
    def matches(event: Event) -> bool:
        payload = event.payload
        return isinstance(payload, AgentAudioPlayed) and payload.utterance_event_id == utterance_id

    return matches


class AgentVoice:
    """Synthesizes queued agent utterances in order and sends their audio."""

    def __init__(self, session: RunSession, send: SendBytes, barge: BargeIn) -> None:
        self.session = session
        self.send = send
        self.barge = barge
        self.utterances: asyncio.Queue[tuple[Event, bytes | None]] = asyncio.Queue()
        self.speaking = False
        self.turn: TurnClock | None = None
        self.recorded: Recorded | None = None
        self.task = asyncio.ensure_future(self._speak_forever())

    @property
    def idle(self) -> bool:
        """Nothing queued for synthesis and nothing being synthesized or sent."""
        return self.utterances.empty() and not self.speaking

    def say(self, event: Event, audio: bytes | None = None) -> None:
        """Queue an agent utterance (synthesized unless it brings its audio) after the others."""
        self.utterances.put_nowait((event, audio))

    async def silence(self, utterance_event_ids: list[str]) -> None:
        """Barge-in: drop queued speech and tell the browser to stop playing now."""
        while not self.utterances.empty():
            self.utterances.get_nowait()
        for event_id in utterance_event_ids:
            await self.send(audio_message(STOP_AUDIO, event_id))

    async def _speak_forever(self) -> None:
        with contextlib.suppress(RunClosed):
            while True:
                event, audio = await self.utterances.get()
                async with self.session.working():
                    # Cleared before working() ends, so its wake-up already sees the voice idle.
                    self.speaking = True
                    try:
                        await self._speak(event, audio)
                    finally:
                        self.speaking = False

    async def _pcm(self, text: str, audio: bytes | None) -> AsyncIterator[bytes]:
        """The utterance's audio chunk by chunk: the agent's own in one piece, or synthesized."""
        if audio is not None:
            yield audio
            return
        for chunk in tts.chunks(strip_markers(text)):
            try:
                yield await service.synthesize(chunk)
            except service.SpeechUnavailable as error:
                # The utterance stays in the log; the run says its audio could not be made.
                await self.session.reject_input(reason_kind=error.kind, reason=error.reason)
                return

    async def _speak(self, event: Event, audio: bytes | None = None) -> None:
        timeline = self.session.timeline
        asked_at = self.session.now()
        start: float | None = None
        plays_until = 0.0
        if not isinstance(event.payload, AgentUtterance):
            return
        async for pcm in self._pcm(event.payload.text, audio):
            if not timeline.holds(event.id):
                return  # cut by a barge-in while it was being synthesized
            now = self.session.now()
            first = start is None
            if start is None:
                start = plays_until = max(now, timeline.end_before(event.id))
            await self.send(audio_message(AGENT_AUDIO, event.id, pcm))
            self.barge.agent_audio(event.id, pcm, now)
            if self.recorded is not None:
                self.recorded(event.id, pcm, max(plays_until, now))
            # A chunk synthesized slower than the last one played starts when it arrives.
            plays_until = max(plays_until, now) + len(pcm) / BYTES_PER_SECOND
            timeline.retime(event.id, start=start, seconds=plays_until - start)
            await self.session.speaker.changed()
            if first:
                await self._first_audio(event, synth_ms=round((now - asked_at) * 1000))

    async def _first_audio(self, event: Event, *, synth_ms: int) -> None:
        await self.session.record(AgentAudioStarted(utterance_event_id=event.id, synth_ms=synth_ms))
        turn, self.turn = self.turn, None
        if turn is None:
            return
        now = self.session.now()
        agent_ms = max(0, round((now - turn.transcript_at) * 1000) - synth_ms)
        heard_ms = round((now - turn.loud_at) * 1000) if turn.loud_at is not None else 0
        await self.session.record(
            TurnLatency(
                caller_event_id=turn.caller_event_id,
                endpointing_ms=turn.endpointing_ms,
                recognition_ms=turn.recognition_ms,
                agent_ms=agent_ms,
                synthesis_ms=synth_ms,
                total_ms=turn.endpointing_ms + round((now - turn.speech_ended_at) * 1000),
                decision_ms=turn.decision_ms,
                candidate_silence_ms=turn.candidate_silence_ms,
                recognition_tail_ms=turn.recognition_tail_ms,
                speculative=turn.speculative,
                voice_to_voice_ms=heard_ms,
                voice_end_clock=turn.voice_end_clock if turn.loud_at is not None else None,
            )
        )

    async def played_out(self) -> None:
        """Wait (bounded) for a browser that reports playback to report what was sent to it."""
        payloads = [e.payload for e in self.session.events]
        reported = {p.utterance_event_id for p in payloads if isinstance(p, AgentAudioPlayed)}
        if not reported:
            return  # a client that never reports playback (headless) has nothing to wait for
        sent = [p.utterance_event_id for p in payloads if isinstance(p, AgentAudioStarted)]
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(PLAYBACK_REPORT_WAIT_S):
                for utterance_id in (u for u in sent if u not in reported):
                    await self.session.wait_for_event(0, _played_report_of(utterance_id))
