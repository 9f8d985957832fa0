"""Caller audio in: frames → VAD → a turn decided at a short-silence candidate → the agent.

A pause of LAB_TURN_CANDIDATE_MS raises a candidate: recognition and the turn model start on
the segment so far, and the decision (lab/audio/turn_end.py) weighs them. Only a turn decided
complete is recorded as the caller's words; LAB_VAD_END_SILENCE_MS ends a turn regardless.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.conf import settings

from lab.audio.frames import FRAME_MS, AudioFrame, parse_frame
from lab.audio.loudness import last_loud_sample
from lab.audio.turn_end import TurnEndConfig, TurnEvidence, decide
from lab.audio.vad import Endpointer, SpeechEnd, SpeechStart, VadConfig, engine_named
from lab.events.types import (
    Event,
    EventPayload,
    InputRejected,
    SpeculationDiscarded,
    SpeechEnded,
    SpeechStarted,
    Transcribed,
    TurnCandidate,
    TurnDecided,
    VoiceEndClock,
)
from lab.runs.barge_in import BargeIn
from lab.runs.log import RunClosed
from lab.runs.session import RunSession
from lab.runs.turn_taking import Speculation, TurnClock, turn_model_name
from lab.speech import asr, service

logger = logging.getLogger(__name__)

ASR_QUEUE = 2
# Shared by every call of the process; each stream waits for its own frame's verdict.
VAD_EXECUTOR = ThreadPoolExecutor(max_workers=2, thread_name_prefix="vad")
_SAMPLES_PER_MS = 16


class AudioRejected(ValueError):
    """Audio the voice channel refused, with its kind and reason."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind, self.reason = kind, reason


@dataclass
class Segment:
    """A decided caller turn waiting for its transcript (perhaps already there)."""

    end: SpeechEnd
    # The vad.speech_ended event, once written (the frame path did not wait for it).
    ended: asyncio.Future[Event]
    start_ms: int
    endpointing_ms: int
    ended_at: float
    early: asyncio.Future[asr.Transcript] | None
    # When the caller's speech ended on the session clock, and which clock placed it.
    loud_at: float | None
    voice_end_clock: VoiceEndClock
    speculation: Speculation | None = None


class CallerAudio:
    """One caller's audio stream: endpointing, turn decisions and recognition jobs."""

    def __init__(
        self,
        session: RunSession,
        barge: BargeIn,
        on_turn: Callable[[TurnClock], None],
    ) -> None:
        self.session = session
        self.barge = barge
        self.on_turn = on_turn
        self.endpointer = Endpointer(
            VadConfig(
                engine=engine_named(settings.LAB_VAD_ENGINE),
                aggressiveness=settings.LAB_VAD_AGGRESSIVENESS,
                end_silence_ms=settings.LAB_VAD_END_SILENCE_MS,
                silero_confirms=settings.LAB_VAD_SILERO_CONFIRMS,
            )
        )
        fallback_ms = settings.LAB_VAD_END_SILENCE_MS
        candidate_ms = settings.LAB_TURN_CANDIDATE_MS
        # Speculating on the reply needs the lab's own agent; an outside one waits for the turn.
        self.candidates = 0 < candidate_ms < fallback_ms and session.scripted_agent is not None
        self.config = TurnEndConfig(
            candidate_ms=candidate_ms if self.candidates else fallback_ms, fallback_ms=fallback_ms
        )
        self.frames = 0
        # While the scripted caller speaks, it owns the audio path; the microphone waits.
        self.scripted = False
        self.muted_frames = 0
        self.segments: asyncio.Queue[Segment] = asyncio.Queue(ASR_QUEUE)
        # Caller turns still waiting on a write they started, recognition having gone on.
        self.writing_turns: set[asyncio.Future[None]] = set()
        self.speculation: Speculation | None = None
        self.early: asyncio.Future[asr.Transcript] | None = None
        self.segment_start_ms = 0
        self.loud_at: float | None = None
        self.frame_at = 0.0
        self.task = asyncio.ensure_future(self._recognize_forever())

    def close(self) -> None:
        self.task.cancel()
        for turn in list(self.writing_turns):
            turn.cancel()
        for pending in (self.early, self.speculation):
            if pending is not None:
                pending.cancel()

    async def push_mic(self, data: bytes) -> None:
        """A microphone frame; refused while the scripted caller is speaking."""
        if self.scripted:
            self.muted_frames += 1
            if self.muted_frames == 1:
                self._reject(
                    "mic_muted", "the microphone is muted while the scripted caller speaks"
                )
            return
        await self.push_audio(data)

    async def push_audio(self, data: bytes) -> None:
        """One 20 ms frame of caller audio: VAD, barge-in, the turn decision, recognition.

        Its events go to the run's ordered writer: a slow write never holds up the next frame.
        """
        self.session.writer.raise_failure()
        try:
            frame = parse_frame(data, self.frames)
        except ValueError as error:
            raise AudioRejected(getattr(error, "kind", "bad_frame"), str(error)) from None
        self.frames += 1
        self.frame_at = self.session.now()
        # Silero's window costs a millisecond or more a frame on a busy core: off the loop,
        # with this stream's frames still in order (the next waits for this one).
        verdicts = await asyncio.get_running_loop().run_in_executor(
            VAD_EXECUTOR, self.endpointer.classify, frame
        )
        vad_events = self.endpointer.push_voiced(frame, verdicts)
        self._hear(frame)
        self.barge.frame(frame.pcm, self.endpointer.voiced, frame.stream_ms)
        for vad_event in vad_events:
            match vad_event:
                case SpeechStart(stream_ms=stream_ms):
                    self.segment_start_ms = stream_ms
                    started = self.session.writer.hand(SpeechStarted(stream_ms=stream_ms))
                    await self.barge.speech_started(started, stream_ms)
                case SpeechEnd() as end:
                    self._fallback(end)
        if not vad_events:
            self._pause()

    def _hear(self, frame: AudioFrame) -> None:
        """Note when the caller's last loud sample was heard: the voice-to-voice clock where
        Silero heard no speech in the segment (noise is loud too, so it places the end late)."""
        loud = last_loud_sample(frame.pcm)
        if loud is not None:
            after_ms = FRAME_MS - (loud + 1) / _SAMPLES_PER_MS
            self.loud_at = self.frame_at - after_ms / 1000

    def _speech_end_at(self) -> tuple[float | None, VoiceEndClock]:
        """When the caller's speech ended on the session clock, and which clock said so."""
        end_ms = self.endpointer.speech_end_ms()
        if end_ms is None or end_ms < self.segment_start_ms:
            return self.loud_at, "loudness"
        after_ms = self.frames * FRAME_MS - end_ms
        return self.frame_at - after_ms / 1000, "silero_vad"

    def _pause(self) -> None:
        """Inside a segment: raise a candidate, or discard one the caller spoke over."""
        silence_ms = self.endpointer.trailing_silence_ms
        if not silence_ms:
            if self.early is not None:
                # Stale now; cancelled, it frees the ASR thread (or its speech-worker slot).
                self.early.cancel()
            self.early = None
            if self.speculation is not None:
                self._discard("the caller went on speaking")
            return
        lead_ms = settings.LAB_ASR_EARLY_MS
        if lead_ms and self.early is None and silence_ms >= lead_ms:
            # Recognition starts as the pause does, so it is mostly done by the candidate.
            self.early = asyncio.ensure_future(service.recognize(self.endpointer.segment_pcm))
        if self.candidates and self.speculation is None and silence_ms >= self.config.candidate_ms:
            self._candidate(silence_ms)

    def _candidate(self, silence_ms: int) -> None:
        agent = self.session.scripted_agent
        if agent is None:
            return
        # Its place in the log is taken on this frame; the write and the decision go on behind.
        candidate = self.session.log.reserve(
            TurnCandidate(stream_ms=self.endpointer.voiced_end_ms, silence_ms=silence_ms)
        )
        self.session.writer.follow(candidate)
        speculation = Speculation(
            pcm=self.endpointer.segment_pcm,
            transcript=self.early,
            silence_ms=silence_ms,
            agent=agent,
            at=self.session.now(),
            candidate=candidate,
        )
        self.speculation = speculation
        speculation.decision = asyncio.ensure_future(self._decide_when_ready(speculation))

    async def _decide_when_ready(self, speculation: Speculation) -> None:
        # Recognition that fails here is reported once, by the turn the fallback ends.
        with contextlib.suppress(asyncio.CancelledError, service.SpeechUnavailable):
            await speculation.ready
            if self.speculation is not speculation:
                return  # discarded, or the fallback decided first
            evidence = speculation.evidence(self.endpointer.trailing_silence_ms)
            if not decide(evidence, self.config).complete:
                self._record_decision(speculation, evidence)
                return
            # Decided over: the segment ends here, before another frame comes in.
            end = self.endpointer.end_now()
            self.speculation = None
            if end is None:
                return
            self._record_decision(speculation, evidence)
            self._speech_ended(end, speculation)

    def _record_decision(self, speculation: Speculation, evidence: TurnEvidence) -> None:
        verdict = decide(evidence, self.config)
        self._about_candidate(
            speculation,
            lambda candidate_id: TurnDecided(
                candidate_event_id=candidate_id,
                complete=verdict.complete,
                model=turn_model_name() if evidence.probability is not None else None,
                model_probability=evidence.probability,
                transcript_signal=evidence.signal,
                silence_ms=evidence.silence_ms,
                reason=verdict.reason,
            ),
        )

    def _discard(self, reason: str) -> None:
        speculation, self.speculation = self.speculation, None
        if speculation is None:
            return
        speculation.cancel()
        self._about_candidate(
            speculation,
            lambda candidate_id: SpeculationDiscarded(
                candidate_event_id=candidate_id, reason=reason
            ),
        )

    def _about_candidate(
        self, speculation: Speculation, payload: Callable[[str], EventPayload]
    ) -> None:
        """Hand over an event naming the candidate: it is made once the candidate, ahead of it
        in the log, is stored (a candidate the log refused fails it the same way)."""
        candidate = speculation.candidate
        self.session.writer.hand(lambda: payload(candidate.result().id))

    def _fallback(self, end: SpeechEnd) -> None:
        """The silence reached LAB_VAD_END_SILENCE_MS (or the segment its limit): the turn ends."""
        speculation, self.speculation = self.speculation, None
        if speculation is not None:
            self._record_decision(speculation, speculation.evidence(self.config.fallback_ms))
        self._speech_ended(end, speculation)

    def _speech_ended(self, end: SpeechEnd, speculation: Speculation | None) -> None:
        heard_at, clock = self._speech_end_at()
        now = self.session.now()
        ended = self.session.writer.hand(
            SpeechEnded(stream_ms=end.stream_ms, segment_ms=end.segment_ms)
        )
        endpointing_ms = self.frames * FRAME_MS - end.stream_ms
        early = speculation.transcript if speculation else self.early
        self.early = None
        segment = Segment(
            end=end,
            ended=ended,
            start_ms=self.segment_start_ms,
            endpointing_ms=endpointing_ms,
            ended_at=now,
            early=early,
            loud_at=heard_at,
            voice_end_clock=clock,
            speculation=speculation,
        )
        try:
            self.segments.put_nowait(segment)
        except asyncio.QueueFull:
            self._reject("asr_busy", "speech recognition is behind; segment dropped")

    def _reject(self, kind: str, reason: str) -> None:
        """session.reject_input, handed to the writer."""
        if not self.session.ended:
            self.session.writer.hand(InputRejected(reason_kind=kind, reason=reason))

    async def _recognize_forever(self) -> None:
        with contextlib.suppress(RunClosed):
            while True:
                segment = await self.segments.get()
                async with self.session.working():
                    await self._turn(segment)

    async def _turn(self, segment: Segment) -> None:
        try:
            transcript = await (segment.early or service.recognize(segment.end.pcm))
        except service.SpeechUnavailable as error:
            # Reported on the run (and its panel), never silently lost.
            await self.session.reject_input(reason_kind=error.kind, reason=error.reason)
            return
        now = self.session.now()
        recognition_ms = round((now - segment.ended_at) * 1000)
        await self.session.record(
            Transcribed(
                text=transcript.text,
                segment_ms=transcript.audio_ms,
                latency_ms=recognition_ms,
                model=asr.model_name(),
                window_ms=transcript.window_ms,
            )
        )
        if not any(ch.isalnum() for ch in transcript.text):
            return
        if await self.barge.absorbs(transcript.text, segment.start_ms, segment.end.stream_ms):
            return  # a backchannel or the agent's own echo: never the caller's turn
        self.on_turn(self._clock(segment, await segment.ended, recognition_ms, now))
        # The segment as the lab heard it goes along, for an agent that listens for itself.
        mark = len(self.session.events)
        turn = asyncio.ensure_future(
            self.session.caller_says(transcript.text, source="asr", audio=segment.end.pcm)
        )
        write = asyncio.ensure_future(self.session.wait_for_event(mark, _commit_started))
        try:
            await asyncio.wait({turn, write}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            write.cancel()
        if turn.done():
            await turn
            return
        # The turn waits on a write it started: recognition goes on meanwhile, so the caller is
        # heard while the write is in flight, not once it has answered.
        self.writing_turns.add(turn)
        turn.add_done_callback(self._turn_over)

    def _turn_over(self, turn: asyncio.Future[None]) -> None:
        self.writing_turns.discard(turn)
        error = None if turn.cancelled() else turn.exception()
        if error is not None and not isinstance(error, RunClosed):
            logger.error("a caller turn failed", exc_info=error)

    def _clock(self, segment: Segment, ended: Event, recognition_ms: int, now: float) -> TurnClock:
        clock = TurnClock(
            caller_event_id=ended.id,
            endpointing_ms=segment.endpointing_ms,
            recognition_ms=recognition_ms,
            transcript_at=now,
            speech_ended_at=segment.ended_at,
            loud_at=segment.loud_at,
            voice_end_clock=segment.voice_end_clock,
        )
        speculation = segment.speculation
        if speculation is not None:
            heard_at = speculation.transcript_at or now
            clock.candidate_silence_ms = speculation.silence_ms
            clock.decision_ms = round((segment.ended_at - speculation.started_at) * 1000)
            clock.recognition_tail_ms = round((heard_at - speculation.started_at) * 1000)
            clock.speculative = segment.endpointing_ms < self.config.fallback_ms
        return clock


def _commit_started(event: Event) -> bool:
    return event.type == "tool.commit.started"
