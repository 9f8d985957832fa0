"""The voice channel's events: speech detected, transcribed, agent audio started and played."""

from __future__ import annotations

from typing import Literal

from lab.events.vocabulary import (
    PayloadModel,
)


class SpeechStarted(PayloadModel):
    type: Literal["vad.speech_started"] = "vad.speech_started"
    stream_ms: int


class SpeechEnded(PayloadModel):
    type: Literal["vad.speech_ended"] = "vad.speech_ended"
    stream_ms: int
    segment_ms: int


class Transcribed(PayloadModel):
    type: Literal["asr.transcribed"] = "asr.transcribed"
    text: str
    segment_ms: int
    latency_ms: int
    model: str


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


class TurnLatency(PayloadModel):
    """The latency chain of one voice turn, each step in milliseconds."""

    type: Literal["turn.latency"] = "turn.latency"
    caller_event_id: str
    endpointing_ms: int
    recognition_ms: int
    agent_ms: int
    synthesis_ms: int
    total_ms: int
