"""The voice channel of a run: caller audio in (caller_audio.py), agent speech out
(agent_voice.py), barge-in (barge_in.py), and the scripted caller's voice.

Model work goes through lab/speech/service.py (in-process executors or speech workers), never
on the event loop; each queue is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib

from django.conf import settings

from lab.audio.frames import FRAME_MS, split_frames
from lab.events.types import AgentAudioPlayed, Event
from lab.runs.agent_voice import (
    AGENT_AUDIO,
    BYTES_PER_SECOND,
    CALLER_AUDIO,
    STOP_AUDIO,
    AgentVoice,
    SendBytes,
    audio_message,
)
from lab.runs.barge_in import BargeIn
from lab.runs.caller_audio import AudioRejected, CallerAudio
from lab.runs.log import RunClosed
from lab.runs.session import RunSession
from lab.runs.turn_taking import TurnClock
from lab.speech import service

__all__ = ["AGENT_AUDIO", "CALLER_AUDIO", "STOP_AUDIO", "AudioRejected", "VoiceLink"]


class VoiceLink:
    """One run's voice connection: what the consumer and the session drive."""

    def __init__(
        self, session: RunSession, send: SendBytes, *, audio_since: float | None = None
    ) -> None:
        self.session = session
        self.send = send
        self.barge = BargeIn(session)
        self.speech = AgentVoice(session, send, self.barge)
        self.caller = CallerAudio(
            session, self.barge, on_turn=self._turn_decided, audio_since=audio_since
        )
        session.voice = self

    def _turn_decided(self, clock: TurnClock) -> None:
        self.speech.turn = clock

    def close(self) -> None:
        self.caller.close()
        self.speech.task.cancel()

    async def aclose(self) -> None:
        """Stop the voice tasks and wait until they have stopped."""
        self.close()
        await asyncio.gather(self.caller.task, self.speech.task, return_exceptions=True)

    @property
    def idle(self) -> bool:
        """Nothing queued for synthesis and nothing being synthesized or sent."""
        return self.speech.idle

    async def push_mic(self, data: bytes) -> None:
        """A microphone frame; refused while the scripted caller is speaking."""
        await self.caller.push_mic(data)

    async def push_audio(self, data: bytes) -> None:
        """One 20 ms frame of caller audio."""
        await self.caller.push_audio(data)

    def say(self, event: Event, audio: bytes | None = None) -> None:
        """Queue an agent utterance (synthesized unless it brings its audio) after the others."""
        self.speech.say(event, audio)

    async def silence(self, utterance_event_ids: list[str]) -> None:
        """Barge-in: drop queued speech and tell the browser to stop playing now."""
        await self.speech.silence(utterance_event_ids)

    async def played(self, *, utterance_event_id: str, played_ms: int, total_ms: int) -> None:
        """The browser's account of what it played of one agent utterance."""
        if not any(
            e.id == utterance_event_id and e.type == "agent.utterance" for e in self.session.events
        ):
            raise AudioRejected("unknown_utterance", f"no agent utterance {utterance_event_id}")
        try:
            await self.session.record(
                AgentAudioPlayed(
                    utterance_event_id=utterance_event_id,
                    played_ms=min(played_ms, total_ms),
                    total_ms=total_ms,
                )
            )
        except RunClosed:
            # The call ended while this report was on its way: nothing is left to account for.
            return

    async def played_out(self) -> None:
        """Wait (bounded) for a browser that reports playback to report what was sent to it."""
        await self.speech.played_out()

    async def caller_voice(self, text: str) -> bytes | None:
        """A scripted line in the caller's voice; None (the run told why) if it cannot be made."""
        try:
            return await service.synthesize(text)
        except service.SpeechUnavailable as error:
            await self.session.reject_input(reason_kind=error.kind, reason=error.reason)
            return None

    async def speak_as_caller(self, text: str, pcm: bytes | None = None) -> None:
        """Say a scripted line (pcm: its audio, made ahead) into the same VAD → ASR path as a
        microphone, in real time."""
        pcm = pcm or await self.caller_voice(text)
        if pcm is None:
            return
        lead = bytes(BYTES_PER_SECOND * 3 // 10)
        tail = bytes(BYTES_PER_SECOND * (settings.LAB_VAD_END_SILENCE_MS + 400) // 1000)
        await self.send(audio_message(CALLER_AUDIO, "caller", pcm))
        mark = len(self.session.events)
        next_at = self.session.now()
        self.caller.scripted = True
        try:
            for frame in split_frames(lead + pcm + tail):
                await self.caller.push_audio(frame.pcm)
                next_at += FRAME_MS / 1000
                await asyncio.sleep(max(0.0, next_at - self.session.now()))
        finally:
            self.caller.scripted = False
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(30):
                await self.session.wait_for_event(mark, lambda e: e.type == "asr.transcribed")
