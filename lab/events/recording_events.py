"""The voice run's recording, referenced from the log by digest (the audio is never embedded)."""

from __future__ import annotations

from typing import Literal

from lab.events.vocabulary import PayloadModel


class CallerPieceRef(PayloadModel):
    """Caller audio received back to back: vad.*'s stream_ms here sits at at_ms on the run clock."""

    stream_ms: int
    at_ms: int


class AgentSpanRef(PayloadModel):
    """Where an agent utterance's audio sits on the run clock; played_ms as the browser said."""

    utterance_event_id: str
    start_ms: int
    end_ms: int
    played_ms: int | None


class RecordingClosed(PayloadModel):
    """The run's stereo WAV (caller left, agent right, 16 kHz PCM16) is complete.

    Sample 0 is the run's clock zero, the `at` of run.started; `digest` is the SHA-256 of the
    file exactly as the run page serves it.
    """

    type: Literal["recording.closed"] = "recording.closed"
    digest: str
    bytes: int
    duration_ms: int
    channels: int
    sample_rate: int
    truncated: bool
    caller_pieces: list[CallerPieceRef]
    agent_spans: list[AgentSpanRef]
