"""The voice channel of a run: caller audio in (VAD → ASR), agent speech out (TTS), barge-in.

Model work goes through lab/speech/service.py (in-process executors or speech workers), never
on the event loop; each queue is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from django.conf import settings

from lab.audio.frames import FRAME_MS, parse_frame, split_frames
from lab.audio.vad import Endpointer, SpeechEnd, SpeechStart, VadConfig
from lab.events.types import (
    AgentAudioPlayed,
    AgentAudioStarted,
    AgentUtterance,
    Event,
    SpeechEnded,
    SpeechStarted,
    Transcribed,
    TurnLatency,
)
from lab.grading.grounding import strip_markers
from lab.runs.log import RunClosed
from lab.runs.pacing import AudioPacer
from lab.runs.session import RunSession
from lab.speech import asr, service, tts

AGENT_AUDIO = 1
STOP_AUDIO = 2
CALLER_AUDIO = 3
ID_BYTES = 8
BYTES_PER_SECOND = 32000
ASR_QUEUE = 2
# How long the end of a call waits for a browser's report of the agent's last words.
PLAYBACK_REPORT_WAIT_S = 3.0

SendBytes = Callable[[bytes], Awaitable[None]]


def _played_report_of(utterance_id: str) -> Callable[[Event], bool]:
    def matches(event: Event) -> bool:
        payload = event.payload
        return isinstance(payload, AgentAudioPlayed) and payload.utterance_event_id == utterance_id

    return matches


class AudioRejected(ValueError):
    """Audio the voice channel refused; `close` says whether the connection must end."""

    def __init__(self, kind: str, reason: str, *, close: bool = False) -> None:
        super().__init__(reason)
        self.kind, self.reason, self.close = kind, reason, close


def audio_message(kind: int, utterance_event_id: str, pcm: bytes = b"") -> bytes:
    """Server-to-browser binary frame: kind byte, 8-byte utterance id, then PCM16 16 kHz."""
    return bytes([kind]) + utterance_event_id.encode("ascii").ljust(ID_BYTES)[:ID_BYTES] + pcm


@dataclass
class Segment:
    """An endpointed caller utterance waiting for recognition (perhaps already under way)."""

    end: SpeechEnd
    ended: Event
    endpointing_ms: int
    ended_at: float
    early: asyncio.Future[asr.Transcript] | None


@dataclass
class TurnClock:
    """Timings of one caller turn, from the end of speech to the first agent audio."""

    caller_event_id: str
    endpointing_ms: int
    recognition_ms: int
    transcript_at: float
    speech_ended_at: float


class VoiceLink:
    def __init__(self, session: RunSession, send: SendBytes) -> None:
        self.session = session
        self.send = send
        self.endpointer = Endpointer(
            VadConfig(
                aggressiveness=settings.LAB_VAD_AGGRESSIVENESS,
                end_silence_ms=settings.LAB_VAD_END_SILENCE_MS,
            )
        )
        self.frames = 0
        self.pacer = AudioPacer()
        # While the scripted caller speaks, it owns the audio path; the microphone waits.
        self.scripted = False
        self.muted_frames = 0
        self.segments: asyncio.Queue[Segment] = asyncio.Queue(ASR_QUEUE)
        self.early: asyncio.Future[asr.Transcript] | None = None
        self.silent_frames = 0
        self.utterances: asyncio.Queue[Event] = asyncio.Queue()
        self.speaking = False
        self.turn: TurnClock | None = None
        self.tasks = [
            asyncio.ensure_future(self._recognize_forever()),
            asyncio.ensure_future(self._speak_forever()),
        ]
        session.voice = self

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        if self.early is not None:
            self.early.cancel()

    async def aclose(self) -> None:
        """Stop the voice tasks and wait until they have stopped."""
        self.close()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    @property
    def idle(self) -> bool:
        """Nothing queued for synthesis and nothing being synthesized or sent."""
        return self.utterances.empty() and not self.speaking

    # -- caller audio in --------------------------------------------------------------------

    async def push_mic(self, data: bytes) -> None:
        """A microphone frame; refused while the scripted caller is speaking."""
        if self.scripted:
            self.muted_frames += 1
            if self.muted_frames == 1:
                await self.session.reject_input(
                    reason_kind="mic_muted",
                    reason="the microphone is muted while the scripted caller speaks",
                )
            return
        await self.push_audio(data)

    async def push_audio(self, data: bytes) -> None:
        """One 20 ms frame of caller audio: VAD, barge-in, and a queued recognition job."""
        try:
            frame = parse_frame(data, self.frames)
        except ValueError as error:
            raise AudioRejected(getattr(error, "kind", "bad_frame"), str(error)) from None
        self._pace()
        self.frames += 1
        vad_events = self.endpointer.push(frame)
        for vad_event in vad_events:
            match vad_event:
                case SpeechStart(stream_ms=stream_ms):
                    await self._speech_started(stream_ms)
                case SpeechEnd() as end:
                    await self._speech_ended(end)
        if not vad_events:
            self._recognize_early()

    def _recognize_early(self) -> None:
        """Start recognition during the trailing silence; drop it if the caller goes on."""
        if not self.endpointer.in_trailing_silence:
            self.silent_frames = 0
            self.early = None
            return
        self.silent_frames += 1
        lead_ms = settings.LAB_ASR_EARLY_MS
        if lead_ms and self.early is None and self.silent_frames * FRAME_MS >= lead_ms:
            self.early = asyncio.ensure_future(service.recognize(self.endpointer.segment_pcm))

    def _pace(self) -> None:
        """Refuse audio arriving faster than real time (beyond a small burst)."""
        if self.pacer.too_fast(self.session.now()):
            raise AudioRejected("too_fast", "audio is arriving faster than real time", close=True)

    async def _speech_started(self, stream_ms: int) -> None:
        started = await self.session.record(SpeechStarted(stream_ms=stream_ms))
        # Barge-in: the caller talking over the agent stops its audio at once.
        await self.session.interrupt(cause_event_id=started.id, at=self.session.now())

    async def _speech_ended(self, end: SpeechEnd) -> None:
        ended = await self.session.record(
            SpeechEnded(stream_ms=end.stream_ms, segment_ms=end.segment_ms)
        )
        endpointing_ms = self.frames * FRAME_MS - end.stream_ms
        early, self.early, self.silent_frames = self.early, None, 0
        try:
            self.segments.put_nowait(Segment(end, ended, endpointing_ms, self.session.now(), early))
        except asyncio.QueueFull:
            await self.session.reject_input(
                reason_kind="asr_busy", reason="speech recognition is behind; segment dropped"
            )

    async def _recognize_forever(self) -> None:
        with contextlib.suppress(RunClosed):
            await self._recognize_segments()

    async def _recognize_segments(self) -> None:
        while True:
            segment = await self.segments.get()
            async with self.session.working():
                transcript = await (segment.early or service.recognize(segment.end.pcm))
                recognition_ms = round((self.session.now() - segment.ended_at) * 1000)
                await self.session.record(
                    Transcribed(
                        text=transcript.text,
                        segment_ms=transcript.audio_ms,
                        latency_ms=recognition_ms,
                        model=asr.model_name(),
                    )
                )
                if not any(ch.isalnum() for ch in transcript.text):
                    continue
                self.turn = TurnClock(
                    caller_event_id=segment.ended.id,
                    endpointing_ms=segment.endpointing_ms,
                    recognition_ms=recognition_ms,
                    transcript_at=self.session.now(),
                    speech_ended_at=segment.ended_at,
                )
                await self.session.caller_says(transcript.text, source="asr")

    # -- agent speech out -------------------------------------------------------------------

    def say(self, event: Event) -> None:
        """Queue an agent utterance for synthesis; its audio follows the ones before it."""
        self.utterances.put_nowait(event)

    async def silence(self, utterance_event_ids: list[str]) -> None:
        """Barge-in: drop queued speech and tell the browser to stop playing now."""
        while not self.utterances.empty():
            self.utterances.get_nowait()
        for event_id in utterance_event_ids:
            await self.send(audio_message(STOP_AUDIO, event_id))

    async def _speak_forever(self) -> None:
        with contextlib.suppress(RunClosed):
            while True:
                event = await self.utterances.get()
                async with self.session.working():
                    # Cleared before working() ends, so its wake-up already sees the voice idle.
                    self.speaking = True
                    try:
                        await self._speak(event)
                    finally:
                        self.speaking = False

    async def _speak(self, event: Event) -> None:
        timeline = self.session.timeline
        asked_at = self.session.now()
        start: float | None = None
        plays_until = 0.0
        if not isinstance(event.payload, AgentUtterance):
            return
        for sentence in tts.sentences(strip_markers(event.payload.text)):
            pcm = await service.synthesize(sentence)
            if not timeline.holds(event.id):
                return  # cut by a barge-in while it was being synthesized
            now = self.session.now()
            first = start is None
            if start is None:
                start = plays_until = max(now, timeline.end_before(event.id))
            await self.send(audio_message(AGENT_AUDIO, event.id, pcm))
            # A sentence synthesized slower than the last one played starts when it arrives.
            plays_until = max(plays_until, now) + len(pcm) / BYTES_PER_SECOND
            timeline.retime(event.id, start=start, seconds=plays_until - start)
            if first:
                await self._first_audio(event, synth_ms=round((now - asked_at) * 1000))

    async def _first_audio(self, event: Event, *, synth_ms: int) -> None:
        await self.session.record(AgentAudioStarted(utterance_event_id=event.id, synth_ms=synth_ms))
        turn, self.turn = self.turn, None
        if turn is None:
            return
        now = self.session.now()
        agent_ms = max(0, round((now - turn.transcript_at) * 1000) - synth_ms)
        await self.session.record(
            TurnLatency(
                caller_event_id=turn.caller_event_id,
                endpointing_ms=turn.endpointing_ms,
                recognition_ms=turn.recognition_ms,
                agent_ms=agent_ms,
                synthesis_ms=synth_ms,
                total_ms=turn.endpointing_ms + round((now - turn.speech_ended_at) * 1000),
            )
        )

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
            raise AudioRejected("run_ended", "the run had ended before this report") from None

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

    # -- the scripted caller's voice --------------------------------------------------------

    async def speak_as_caller(self, text: str) -> None:
        """Say a scripted line into the same VAD → ASR path as a microphone, in real time."""
        pcm = await service.synthesize(text)
        lead = bytes(BYTES_PER_SECOND * 3 // 10)
        tail = bytes(BYTES_PER_SECOND * (settings.LAB_VAD_END_SILENCE_MS + 400) // 1000)
        await self.send(audio_message(CALLER_AUDIO, "caller", pcm))
        mark = len(self.session.events)
        next_at = self.session.now()
        self.scripted = True
        try:
            for frame in split_frames(lead + pcm + tail):
                await self.push_audio(frame.pcm)
                next_at += FRAME_MS / 1000
                await asyncio.sleep(max(0.0, next_at - self.session.now()))
        finally:
            self.scripted = False
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(30):
                await self.session.wait_for_event(mark, lambda e: e.type == "asr.transcribed")
