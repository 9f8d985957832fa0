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
from lab.runs.phone_line import impair_line
from lab.runs.recorder import Recorder
from lab.runs.session import RunSession
from lab.runs.turn_taking import TurnClock
from lab.speech import service
from lab.speech.recognizer import ASKER, Asker

__all__ = ["AGENT_AUDIO", "CALLER_AUDIO", "STOP_AUDIO", "AudioRejected", "VoiceLink"]


class VoiceLink:
    """One run's voice connection: what the consumer and the session drive."""

    def __init__(self, session: RunSession, send: SendBytes) -> None:
        self.session = session
        self.send = send
        self.barge = BargeIn(session)
        self.recorder = Recorder(session)
        self.speech = AgentVoice(session, send, self.barge)
        self.speech.recorded = self.recorder.agent_audio
        # Recognition asked from the frame path speculates; the turn loop's (a task the caller
        # audio starts now, with this context) is a decided turn's, and runs first.
        self.stream = f"run-{session.run.pk}-{id(self):x}"
        self._speculating = Asker(self.stream, final=False)
        deciding = ASKER.set(Asker(self.stream, final=True))
        try:
            self.caller = CallerAudio(session, self.barge, on_turn=self._turn_decided)
        finally:
            ASKER.reset(deciding)
        session.listeners.append(self._promote_decided)
        session.voice = self
        session.before_end.append(self.recorder.seal)

    async def _promote_decided(self, event: Event) -> None:
        if event.type == "vad.speech_ended":
            # The turn is decided: its speculative recognition is now what the caller waits on.
            service.promote(self.stream)

    def _turn_decided(self, clock: TurnClock) -> None:
        self.speech.turn = clock

    def close(self) -> None:
        self.caller.close()
        self.speech.task.cancel()
        if self._promote_decided in self.session.listeners:
            self.session.listeners.remove(self._promote_decided)

    async def aclose(self) -> None:
        """Stop the voice tasks and wait until they have stopped; store the recording's rest."""
        self.close()
        await asyncio.gather(self.caller.task, self.speech.task, return_exceptions=True)
        await self.recorder.aclose()

    @property
    def idle(self) -> bool:
        """Nothing queued for synthesis and nothing being synthesized or sent."""
        return self.speech.idle

    async def push_mic(self, data: bytes) -> None:
        """A microphone frame; refused while the scripted caller is speaking."""
        ASKER.set(self._speculating)
        if self.caller.scripted:
            await self.caller.push_mic(data)
        else:
            await self.push_audio(data)

    async def push_audio(self, data: bytes) -> None:
        """One 20 ms frame of caller audio; recorded once the voice path has taken it."""
        ASKER.set(self._speculating)
        arrived = self.session.now()
        frames = self.caller.frames
        try:
            await self.caller.push_audio(data)
        finally:
            if self.caller.frames > frames:
                self.recorder.caller_frame(data, arrived)

    def say(self, event: Event, audio: bytes | None = None) -> None:
        """Queue an agent utterance (synthesized unless it brings its audio) after the others."""
        self.speech.say(event, audio)

    async def silence(self, utterance_event_ids: list[str], *, at: float | None = None) -> None:
        """Barge-in: drop queued speech and tell the browser to stop playing now; the recording
        holds no agent audio from `at`, where the caller began."""
        if at is not None:
            self.recorder.agent_cut(at)
        await self.speech.silence(utterance_event_ids)

    async def played(self, *, utterance_event_id: str, played_ms: int, total_ms: int) -> None:
        """The browser's account of what it played of one agent utterance."""
        if not any(
            e.id == utterance_event_id and e.type == "agent.utterance" for e in self.session.events
        ):
            raise AudioRejected("unknown_utterance", f"no agent utterance {utterance_event_id}")
        self.recorder.agent_played(utterance_event_id, min(played_ms, total_ms))
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

    async def speak_as_caller(self, text: str, pcm: bytes | None = None, *, line: int) -> None:
        """Say scripted line `line` (pcm: its audio, made ahead) into the same VAD → ASR path as a
        microphone, in real time, over the contract's phone line if it has one."""
        pcm = pcm or await self.caller_voice(text)
        if pcm is None:
            return
        lead_ms, tail_ms = 300, settings.LAB_VAD_END_SILENCE_MS + 400
        phone = self.session.contract.line
        if phone is not None and phone.on(line):
            # Whole-clip FFTs take tens of milliseconds: off the event loop.
            impaired = await asyncio.to_thread(
                impair_line, phone, line, pcm, lead_ms=lead_ms, tail_ms=tail_ms
            )
            await self.session.record(impaired.record)
            # The evaluator hears the line as the lab did, its noise before and after the words.
            audio, heard, delays_ms = impaired.pcm, impaired.pcm, impaired.delays_ms
        else:
            audio = bytes(BYTES_PER_SECOND * lead_ms // 1000) + pcm
            audio += bytes(BYTES_PER_SECOND * tail_ms // 1000)
            heard, delays_ms = pcm, []
        await self.send(audio_message(CALLER_AUDIO, "caller", heard))
        mark = len(self.session.events)
        started = self.session.now()
        self.caller.scripted = True
        ASKER.set(self._speculating)
        try:
            for frame in split_frames(audio):
                await self.push_audio(frame.pcm)
                # The next frame is due 20 ms on, later if the line holds it up (then bunched).
                due = frame.index + 1
                late_ms = delays_ms[due] if due < len(delays_ms) else 0
                next_at = started + (due * FRAME_MS + late_ms) / 1000
                await asyncio.sleep(max(0.0, next_at - self.session.now()))
        finally:
            self.caller.scripted = False
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(30):
                await self.session.wait_for_event(mark, lambda e: e.type == "asr.transcribed")
