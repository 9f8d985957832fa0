"""Endpointing: per-frame speech verdicts (Silero VAD or webrtcvad) folded into start/end events.

Pure: time is the frame index times 20 ms (Silero's ends, its samples), never a clock.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Literal

import webrtcvad

from lab.audio.frames import BYTES_PER_MS, FRAME_MS, SAMPLE_RATE, AudioFrame
from lab.audio.silero import SileroStream

VadEngine = Literal["silero", "webrtcvad"]
VAD_ENGINES: tuple[VadEngine, ...] = ("silero", "webrtcvad")
# Speech that must run before a start is declared. webrtcvad calls blips of noise speech, so
# it needs three frames; Silero judges 32 ms windows with hysteresis, and one frame of its
# verdict started no segment in pink noise even at 5 dB SNR (benchmarks/bench_vad.py).
START_MS: dict[VadEngine, int] = {"silero": 20, "webrtcvad": 60}


def engine_named(name: str) -> VadEngine:
    """The engine a setting names, or ValueError saying which exist."""
    for engine in VAD_ENGINES:
        if engine == name:
            return engine
    raise ValueError(f"no VAD engine {name!r}: one of {', '.join(VAD_ENGINES)}")


class VadState(Enum):
    QUIET = "quiet"
    STARTING = "starting"
    SPEAKING = "speaking"
    STOPPING = "stopping"


@dataclass(frozen=True, slots=True)
class VadConfig:
    """Durations in milliseconds; each is rounded up to whole 20 ms frames."""

    engine: VadEngine = "webrtcvad"
    # webrtcvad's only: from 0 (calls the most audio speech) to 3 (the strictest).
    aggressiveness: int = 2
    # None: the engine's own (START_MS).
    start_ms: int | None = None
    end_silence_ms: int = 500
    pre_roll_ms: int = 200
    max_segment_ms: int = 15_000
    # Run Silero beside webrtcvad for where speech ends (always on under Silero).
    speech_clock: bool = True
    # Under webrtcvad: Silero may overrule its speech (silero_quiet_ms). webrtcvad calls a noise
    # floor that returns after digital silence, or steps up, speech for seconds, which held the
    # candidate back in noise (docs/benchmarks.md, bench_vad_candidate).
    silero_confirms: bool = False
    # Under silero_confirms webrtcvad's speech holds a segment until Silero, having heard speech
    # in it, has heard none for this long; the pause is then counted from Silero's last speech,
    # and until webrtcvad itself hears end_silence_ms of no speech its speech starts nothing
    # without Silero's (it is hearing noise). On the side by side's clean lines Silero's pauses
    # inside a line ran to 280 ms where webrtcvad's were ~140 ms shorter (and raise the
    # candidate there first), so clean lines are cut as under webrtcvad alone. Over a phone line
    # Silero hears next to no speech, and the segment stays webrtcvad's.
    silero_quiet_ms: int = 300

    def __post_init__(self) -> None:
        if self.engine not in VAD_ENGINES:
            raise ValueError(f"engine must be one of {', '.join(VAD_ENGINES)}, got {self.engine!r}")
        if self.aggressiveness not in range(4):
            raise ValueError(f"aggressiveness must be 0-3, got {self.aggressiveness}")
        for name in ("start_ms", "end_silence_ms", "max_segment_ms", "silero_quiet_ms"):
            if getattr(self, name) is not None and getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.pre_roll_ms < 0:
            raise ValueError(f"pre_roll_ms must not be negative, got {self.pre_roll_ms}")


@dataclass(frozen=True, slots=True)
class Verdicts:
    """One frame's verdicts: webrtcvad's (after its warm-up) and Silero's (None: not running)."""

    webrtcvad: bool
    silero: bool | None = None


@dataclass(frozen=True, slots=True)
class SpeechStart:
    """Speech began at `stream_ms` (the first voiced frame), decided `start_ms` later."""

    stream_ms: int


@dataclass(frozen=True, slots=True)
class SpeechEnd:
    """Speech ended at `stream_ms` (after the last voiced frame); `pcm` includes pre-roll."""

    stream_ms: int
    segment_ms: int
    pcm: bytes


VadEvent = SpeechStart | SpeechEnd


# webrtcvad calls up to six frames at the start of every stream speech, whatever they
# hold (measured on noise from -70 to -30 dBFS), while its noise model adapts; so its
# verdicts count only after these, or every connection would open with a false start.
_WARMUP_FRAMES = 8


def _frames(ms: int) -> int:
    return math.ceil(ms / FRAME_MS)


class Endpointer:
    """Turns a stream of frames into SpeechStart/SpeechEnd events, one stream per instance."""

    def __init__(self, config: VadConfig | None = None) -> None:
        self.config = config or VadConfig()
        self._vad = webrtcvad.Vad(self.config.aggressiveness)
        # Silero runs under either engine: its speech probability places the end of speech.
        config = self.config
        silero = config.speech_clock or config.silero_confirms or config.engine == "silero"
        self._silero = SileroStream() if silero else None
        self._start_frames = _frames(self.config.start_ms or START_MS[self.config.engine])
        self._end_frames = _frames(self.config.end_silence_ms)
        self._max_frames = _frames(self.config.max_segment_ms)
        # Holds the pre-roll plus the voiced run being judged, so a declared start
        # keeps the first syllable and the moments before it.
        self._recent: deque[bytes] = deque(
            maxlen=_frames(self.config.pre_roll_ms) + self._start_frames
        )
        self._segment: list[bytes] = []
        self.state = VadState.QUIET
        self._run = 0
        self._run_start_index = 0
        self._segment_frames = 0
        self._last_voiced_index = 0
        self._classified = 0
        self._quiet_frames = _frames(self.config.silero_quiet_ms)
        # The last frame Silero heard speech in, and (on a frame it overrules webrtcvad) the
        # frames since, inside the segment.
        self._silero_heard = -1
        self._silero_quiet: int | None = None
        # Set once Silero has overruled webrtcvad, until webrtcvad has heard end_silence_ms of
        # no speech: its speech starts nothing without Silero's meanwhile (it is hearing noise).
        self._overruled = False
        self._webrtcvad_quiet = 0
        # The verdict on the latest frame (after the warm-up), for listeners such as barge-in.
        self.voiced = False

    @property
    def in_trailing_silence(self) -> bool:
        """True while speech may have ended: a caller may start recognition early."""
        return self.state is VadState.STOPPING

    @property
    def trailing_silence_ms(self) -> int:
        """How long the current pause has lasted, in audio; 0 unless in trailing silence."""
        return self._run * FRAME_MS if self.state is VadState.STOPPING else 0

    @property
    def voiced_end_ms(self) -> int:
        """Stream time just after the segment's last voiced frame."""
        return (self._last_voiced_index + 1) * FRAME_MS

    @property
    def speech_probability(self) -> float | None:
        """Silero's P(speech) for the latest window; None under webrtcvad, which gives none."""
        return None if self._silero is None else self._silero.probability

    def speech_end_ms(self) -> float | None:
        """Where the speech ended: its last loud sample inside Silero's last speech window (else
        that window's end); None without Silero or before it heard any speech."""
        if self._silero is None or not self._silero.speech_end_sample:
            return None
        return self._silero.speech_end_ms()

    def end_now(self) -> SpeechEnd | None:
        """End the segment in its trailing silence (the turn was decided over); else None."""
        if self.state is not VadState.STOPPING:
            return None
        return self._end(self.voiced_end_ms)

    @property
    def segment_pcm(self) -> bytes:
        """The current segment's audio so far (pre-roll included); empty outside one."""
        return b"".join(self._segment)

    def push(self, frame: AudioFrame) -> list[VadEvent]:
        """Classify one frame with the configured engine and advance the state machine."""
        return self.push_voiced(frame, self.classify(frame))

    def classify(self, frame: AudioFrame) -> Verdicts:
        """Both engines' verdicts on one frame (the models' part: Silero's window costs about a
        millisecond on a busy core, so a server runs this off its event loop, frames in order)."""
        silero = self._silero.push(frame.pcm) if self._silero is not None else None
        voiced = self._vad.is_speech(frame.pcm, SAMPLE_RATE)
        self._classified += 1
        return Verdicts(webrtcvad=voiced and self._classified > _WARMUP_FRAMES, silero=silero)

    def _judge(self, frame: AudioFrame, verdicts: Verdicts) -> bool:
        """The configured engine's verdict; under silero_confirms, webrtcvad's speech holds a
        segment only until Silero's silence after speech it heard there outlasts silero_quiet_ms,
        and once overruled starts one only with Silero's until webrtcvad itself hears a pause."""
        self._silero_quiet = None
        if self.config.engine == "silero":
            return bool(verdicts.silero)
        if not self.config.silero_confirms or verdicts.silero is None:
            return verdicts.webrtcvad
        webrtc = verdicts.webrtcvad
        self._webrtcvad_quiet = 0 if webrtc else self._webrtcvad_quiet + 1
        if self._webrtcvad_quiet >= self._end_frames:
            self._overruled = False
        if verdicts.silero:
            self._silero_heard = frame.index
        if self.state in (VadState.QUIET, VadState.STARTING):
            return webrtc and (verdicts.silero or not self._overruled)
        # Silero must have heard speech in the segment to overrule webrtcvad: over a phone line
        # (8 kHz, band-limited, lossy) it hears next to none in words webrtcvad hears.
        quiet = frame.index - self._silero_heard
        if webrtc and self._silero_heard >= self._run_start_index and quiet >= self._quiet_frames:
            # Overruled: the pause began after Silero's last speech in the segment.
            self._overruled, self._silero_quiet = True, quiet
            return False
        return webrtc

    def push_voiced(self, frame: AudioFrame, verdict: bool | Verdicts) -> list[VadEvent]:
        """Advance the state machine with an already-made verdict, or both engines' (judged by
        the configured engine and rule)."""
        voiced = verdict if isinstance(verdict, bool) else self._judge(frame, verdict)
        self.voiced = voiced
        match self.state, voiced:
            case VadState.QUIET, False:
                self._recent.append(frame.pcm)
            case VadState.QUIET, True:
                self._recent.append(frame.pcm)
                self._run, self._run_start_index = 1, frame.index
                self.state = VadState.STARTING
                return self._start_if_sustained()
            case VadState.STARTING, True:
                self._recent.append(frame.pcm)
                self._run += 1
                return self._start_if_sustained()
            case VadState.STARTING, False:
                # A blip shorter than start_ms: noise, not speech.
                self._recent.append(frame.pcm)
                self.state = VadState.QUIET
            case VadState.SPEAKING | VadState.STOPPING, True:
                self._segment.append(frame.pcm)
                self._segment_frames += 1
                self._last_voiced_index = frame.index
                self.state = VadState.SPEAKING
                self._run = 0
                return self._end_if_too_long(frame)
            case VadState.SPEAKING | VadState.STOPPING, False:
                self._segment.append(frame.pcm)
                self._segment_frames += 1
                self.state = VadState.STOPPING
                self._run += 1
                quiet = self._silero_quiet
                if quiet is not None and quiet > self._run:
                    # webrtcvad ran on where Silero heard no speech: the pause began after
                    # Silero's last speech, and the segment's voiced end is there.
                    self._run = quiet
                    self._last_voiced_index = frame.index - quiet
                if self._run >= self._end_frames:
                    return [self._end(self.voiced_end_ms)]
                return self._end_if_too_long(frame)
        return []

    def _start_if_sustained(self) -> list[VadEvent]:
        if self._run < self._start_frames:
            return []
        self._segment = list(self._recent)
        self._recent.clear()
        self.state = VadState.SPEAKING
        self._segment_frames = self._run
        self._last_voiced_index = self._run_start_index + self._run - 1
        self._run = 0
        return [SpeechStart(stream_ms=self._run_start_index * FRAME_MS)]

    def _end_if_too_long(self, frame: AudioFrame) -> list[VadEvent]:
        if self._segment_frames < self._max_frames:
            return []
        return [self._end((frame.index + 1) * FRAME_MS)]

    def _end(self, stream_ms: int) -> SpeechEnd:
        pcm = self.segment_pcm
        self._segment = []
        self.state = VadState.QUIET
        self._run = 0
        return SpeechEnd(stream_ms=stream_ms, segment_ms=len(pcm) // BYTES_PER_MS, pcm=pcm)
