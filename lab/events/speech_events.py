"""The voice channel's events: speech detected, transcribed, agent audio started and played."""

from __future__ import annotations

from typing import ClassVar, Literal

from lab.events.vocabulary import (
    EvolvingPayload,
    PayloadModel,
)

TranscriptSignal = Literal["complete", "incomplete", "unknown"]
VoiceEndClock = Literal["silero_vad", "loudness"]


class SpeechStarted(PayloadModel):
    type: Literal["vad.speech_started"] = "vad.speech_started"
    stream_ms: int


class SpeechEnded(PayloadModel):
    type: Literal["vad.speech_ended"] = "vad.speech_ended"
    stream_ms: int
    segment_ms: int


class Transcribed(EvolvingPayload):
    type: Literal["asr.transcribed"] = "asr.transcribed"
    text: str
    segment_ms: int
    latency_ms: int
    model: str
    # The encoder window the words came from, in ms of audio (30000: Whisper's full window).
    window_ms: int | None = None

    _added_later: ClassVar[tuple[str, ...]] = ("window_ms",)


class AgentAudioStarted(PayloadModel):
    """The first audio frame of an agent utterance left the server."""

    type: Literal["agent.audio_started"] = "agent.audio_started"
    utterance_event_id: str
    synth_ms: int


class AgentAudioPlayed(PayloadModel):
    """What the browser reports it actually played of one agent utterance."""

    type: Literal["agent.audio_played"] = "agent.audio_played"
    utterance_event_id: str
    played_ms: int
    total_ms: int


class TurnCandidate(PayloadModel):
    """A short silence after caller speech: the turn may have ended, so it is decided now."""

    type: Literal["turn.candidate"] = "turn.candidate"
    stream_ms: int
    silence_ms: int


class TurnDecided(PayloadModel):
    """One decision on a candidate: the turn is complete (the agent answers) or not yet."""

    type: Literal["turn.decided"] = "turn.decided"
    candidate_event_id: str
    complete: bool
    model: str | None
    model_probability: float | None
    transcript_signal: TranscriptSignal
    silence_ms: int
    reason: str


class SpeculationDiscarded(PayloadModel):
    """The reply prepared at a candidate was thrown away: the caller went on speaking."""

    type: Literal["turn.speculation_discarded"] = "turn.speculation_discarded"
    candidate_event_id: str
    reason: str


class TurnLatency(EvolvingPayload):
    """The latency chain of one voice turn, each step in milliseconds."""

    type: Literal["turn.latency"] = "turn.latency"
    caller_event_id: str
    endpointing_ms: int
    recognition_ms: int
    agent_ms: int
    synthesis_ms: int
    total_ms: int
    # Candidate → decided (wall time), and the pause heard when the candidate was raised.
    decision_ms: int = 0
    candidate_silence_ms: int = 0
    # Recognition's wall time from the candidate to its transcript.
    recognition_tail_ms: int = 0
    # Whether the turn was decided at a candidate (else the silence fallback ended it).
    speculative: bool = False
    # From the end of the caller's speech to the first agent audio: what a caller hears.
    voice_to_voice_ms: int = 0
    # Where that end came from: "silero_vad", the last sample above -40 dBFS under Silero's
    # last speech window; "loudness", the last sample above -40 dBFS (noise keeps it late).
    voice_end_clock: VoiceEndClock | None = None

    _added_later: ClassVar[tuple[str, ...]] = (
        "decision_ms",
        "candidate_silence_ms",
        "recognition_tail_ms",
        "speculative",
        "voice_to_voice_ms",
        "voice_end_clock",
    )


class CallerBackchannel(PayloadModel):
    """A short acknowledgement ("mm-hmm") said over agent speech: the agent went on."""

    type: Literal["caller.backchannel"] = "caller.backchannel"
    text: str
    during_utterance_event_id: str
    reason: str


class EchoIgnored(PayloadModel):
    """Speech the mic picked up that matched the agent's own audio: no barge-in."""

    type: Literal["voice.echo_ignored"] = "voice.echo_ignored"
    during_utterance_event_id: str
    score: float
    reason: str


class LineImpaired(PayloadModel):
    """What the scenario's phone line did to one scripted caller line before the lab heard it."""

    type: Literal["caller.line_impaired"] = "caller.line_impaired"
    line: int
    seed: int
    kinds: list[str]
    frames: int
    frames_lost: int
    frames_late: int
    max_late_ms: int
    # The words' power over the added noise, measured on the audio as sent; None: no noise.
    snr_db: float | None = None
    # Samples held at the clipping level; None: no clipping.
    clipped_samples: int | None = None
    # The keys pressed before the words, in order (a phone wire that reports presses, Twilio's
    # and Telnyx's, hears them in the audio and sends each as `dtmf`); None: no keypad.
    keypad: str | None = None
