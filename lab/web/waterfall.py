"""The latency waterfall of each voice turn: one time axis per turn, drawn from the log alone.

Pure: events in, rows out. The axis starts at the caller's end of speech (the last sample above
-40 dBFS where the log has it, else the last voiced frame) and ends at the agent's first audio.
turn.candidate and turn.decided place the endpoint candidate and the decision; logs recorded
before them draw the sequential chain (endpointing, recognition, agent, synthesis) alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lab.events.types import Event, TurnCandidate, TurnDecided, TurnLatency

# A marker (an instant, not a span) is drawn this wide, in percent of the axis.
MARKER_PCT = 0.8


@dataclass(frozen=True)
class LatencyBar:
    """One row: `label` is its CSS class, `text` what it says, offsets in percent of the axis."""

    label: str
    text: str
    ms: int
    offset_pct: float
    width_pct: float


@dataclass(frozen=True)
class Waterfall:
    caller_event_id: str
    total_ms: int
    axis_ms: int
    bars: list[LatencyBar]
    decision: str | None


@dataclass(frozen=True)
class _Span:
    label: str
    text: str
    start_ms: int
    ms: int
    marker: bool = False


def waterfalls(events: Sequence[Event]) -> list[Waterfall]:
    """Every voice turn's waterfall, in log order."""
    out: list[Waterfall] = []
    candidates: dict[str, tuple[Event, TurnCandidate]] = {}
    decided: TurnDecided | None = None
    for event in events:
        match event.payload:
            case TurnCandidate() as candidate:
                candidates[event.id] = (event, candidate)
            case TurnDecided(complete=True) as decision:
                decided = decision
            case TurnLatency() as latency:
                found = candidates.get(decided.candidate_event_id) if decided else None
                out.append(waterfall(latency, decided, found[1] if found else None))
                decided = None
    return out


def waterfall(
    latency: TurnLatency, decided: TurnDecided | None, candidate: TurnCandidate | None
) -> Waterfall:
    """One turn on one axis; `decided`/`candidate` are the turn's decision events, if logged."""
    spans = _spans(latency, decided, candidate)
    # The caller's last loud sample comes before the last voiced frame: the axis starts there.
    lead = max(0, latency.voice_to_voice_ms - latency.total_ms)
    if lead:
        spans.insert(
            0, _Span("heard", "end of speech (audio) → first audio", 0, latency.voice_to_voice_ms)
        )
    shifted = [
        s if s.label == "heard" else _Span(s.label, s.text, s.start_ms + lead, s.ms, s.marker)
        for s in spans
    ]
    axis = max([1, *(s.start_ms + (0 if s.marker else s.ms) for s in shifted)])
    bars = [
        LatencyBar(
            s.label,
            s.text,
            s.ms,
            100 * min(s.start_ms, axis) / axis,
            MARKER_PCT if s.marker else 100 * s.ms / axis,
        )
        for s in shifted
    ]
    return Waterfall(latency.caller_event_id, latency.total_ms, axis, bars, _decision_text(decided))


def _spans(
    latency: TurnLatency, decided: TurnDecided | None, candidate: TurnCandidate | None
) -> list[_Span]:
    """The turn's steps, 0 at the last voiced frame."""
    spans = [_Span("endpointing", "end of speech declared", 0, latency.endpointing_ms)]
    candidate_ms = candidate.silence_ms if candidate else latency.candidate_silence_ms
    if candidate or latency.candidate_silence_ms:
        spans.append(_Span("candidate", "endpoint candidate", candidate_ms, candidate_ms, True))
        decided_ms = decided.silence_ms if decided else candidate_ms + latency.decision_ms
        spans.append(_Span("decision", "turn decision", candidate_ms, decided_ms - candidate_ms))
        # Recognition started at the candidate; the tail is what was left after it.
        spans.append(_Span("recognition", "recognition", candidate_ms, latency.recognition_tail_ms))
    else:
        spans.append(
            _Span("recognition", "recognition", latency.endpointing_ms, latency.recognition_ms)
        )
    # The agent and the first sentence's synthesis end where the first audio goes out.
    synthesis_at = max(0, latency.total_ms - latency.synthesis_ms)
    spans.append(_Span("agent", "agent", max(0, synthesis_at - latency.agent_ms), latency.agent_ms))
    spans.append(_Span("synthesis", "synthesis", synthesis_at, latency.synthesis_ms))
    spans.append(_Span("first-audio", "first audio", latency.total_ms, latency.total_ms, True))
    return spans


def _decision_text(decided: TurnDecided | None) -> str | None:
    """Why the turn ended when it did: the model's probability, the words' signal, the reason."""
    if decided is None:
        return None
    parts = [f"transcript {decided.transcript_signal}"]
    if decided.model_probability is not None:
        parts.insert(0, f"{decided.model or 'turn model'} p={decided.model_probability:.2f}")
    why = ", ".join(parts)
    return f"Decided complete after {decided.silence_ms} ms of silence ({why}): {decided.reason}"
