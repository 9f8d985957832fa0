"""The latency waterfall of each voice turn: one time axis per turn, drawn from the log alone.

Pure: events in, rows out. The axis starts at the caller's end of speech (the last sample above
-40 dBFS where the log has it, else the last voiced frame) and ends at the agent's first audio.
turn.candidate and turn.decided place the endpoint candidate and the decision; logs recorded
before them draw the sequential chain (endpointing, recognition, agent, synthesis) alone. A phone
call's bot is a black box: its turns draw the wait alone (phone.latency), and each barge-in its
own axis from the caller's first voiced sample over the bot (phone.barge_in).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lab.events.types import (
    AgentUtterance,
    CallerUtterance,
    Event,
    PhoneBargeIn,
    PhoneLatency,
    TurnCandidate,
    TurnDecided,
    TurnLatency,
)

# A marker (an instant, not a span) is drawn this wide, in percent of the axis.
MARKER_PCT = 0.8
# Round tick steps in ms; the axis gets at most MAX_TICKS labels so none overlaps at phone width.
TICK_STEPS = (10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000)
MAX_TICKS = 4
# Tick labels past this share of the axis would run off its end.
LAST_TICK_PCT = 92.0


@dataclass(frozen=True)
class Tick:
    ms: int
    pct: float


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
    ticks: list[Tick]
    # "turn": end of speech → first audio; "interruption": the caller over the bot → its stop.
    kind: str = "turn"


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
    caller_id = agent_id = ""
    for event in events:
        match event.payload:
            case CallerUtterance():
                caller_id = event.id
            case AgentUtterance():
                agent_id = event.id
            case PhoneLatency(latency_ms=latency_ms):
                out.append(_drawn(caller_id, latency_ms, [_reply_wait(latency_ms)]))
            case PhoneBargeIn() as cut:
                # Recorded once the readback it cut into was heard: the utterance before it.
                out.append(_drawn(agent_id, cut.response_ms, _cut_spans(cut), "interruption"))
            case TurnCandidate() as candidate:
                candidates[event.id] = (event, candidate)
            case TurnDecided(complete=True) as decision:
                decided = decision
            case TurnLatency() as latency:
                found = candidates.get(decided.candidate_event_id) if decided else None
                out.append(waterfall(latency, decided, found[1] if found else None))
                decided = None
    return out


# Which clock placed the end of the caller's speech; older logs say none.
_CLOCKS = {
    "silero_vad": " (speech end from Silero VAD)",
    "loudness": " (speech end from loudness)",
}


def waterfall(
    latency: TurnLatency, decided: TurnDecided | None, candidate: TurnCandidate | None
) -> Waterfall:
    """One turn on one axis; `decided`/`candidate` are the turn's decision events, if logged."""
    spans = _spans(latency, decided, candidate)
    # The end of the caller's speech comes before the last voiced frame: the axis starts there.
    lead = max(0, latency.voice_to_voice_ms - latency.total_ms)
    if lead:
        waited = f"caller waited{_CLOCKS.get(latency.voice_end_clock or '', '')}"
        spans.insert(0, _Span("heard", waited, 0, latency.voice_to_voice_ms))
    shifted = [
        s if s.label == "heard" else _Span(s.label, s.text, s.start_ms + lead, s.ms, s.marker)
        for s in spans
    ]
    # In the order they happen (a stable sort keeps a span before the ones it leads to).
    shifted.sort(key=lambda s: s.start_ms)
    axis = max([1, *(s.start_ms + (0 if s.marker else s.ms) for s in shifted)])
    bars = [
        LatencyBar(
            s.label,
            s.text,
            s.ms,
            # A marker at the axis's end is drawn just inside it.
            min(100 * s.start_ms / axis, 100 - MARKER_PCT) if s.marker else 100 * s.start_ms / axis,
            MARKER_PCT if s.marker else 100 * s.ms / axis,
        )
        for s in shifted
    ]
    return Waterfall(
        latency.caller_event_id, latency.total_ms, axis, bars, _decision_text(decided), ticks(axis)
    )


def _reply_wait(latency_ms: int) -> _Span:
    return _Span("agent", "bot's reply, heard on the line", 0, max(0, latency_ms))


def _cut_spans(cut: PhoneBargeIn) -> list[_Span]:
    stop = "bot's clear" if cut.cleared else "end of the bot's audio"
    return [
        _Span("heard", "both speaking", 0, cut.talk_over_ms),
        _Span("agent", f"until the {stop}", 0, cut.response_ms),
        _Span("first-audio", stop, cut.response_ms, cut.response_ms, True),
    ]


def _drawn(event_id: str, total_ms: int, spans: list[_Span], kind: str = "turn") -> Waterfall:
    """A phone call's axis: what the line measured, with no steps inside the bot to show."""
    if kind == "turn":
        spans = [*spans, _Span("first-audio", "first audio", total_ms, total_ms, True)]
    axis = max([1, *(s.start_ms + (0 if s.marker else s.ms) for s in spans)])
    bars = [
        LatencyBar(
            s.label,
            s.text,
            s.ms,
            min(100 * s.start_ms / axis, 100 - MARKER_PCT) if s.marker else 100 * s.start_ms / axis,
            MARKER_PCT if s.marker else 100 * s.ms / axis,
        )
        for s in spans
    ]
    return Waterfall(event_id, total_ms, axis, bars, None, ticks(axis), kind)


def ticks(axis_ms: int) -> list[Tick]:
    """Round marks along the axis, at most MAX_TICKS, 0 first."""
    step = next((s for s in TICK_STEPS if axis_ms / s < MAX_TICKS), TICK_STEPS[-1])
    marks = range(0, axis_ms + 1, step)
    return [Tick(ms, 100 * ms / axis_ms) for ms in marks if 100 * ms / axis_ms <= LAST_TICK_PCT]


def _spans(
    latency: TurnLatency, decided: TurnDecided | None, candidate: TurnCandidate | None
) -> list[_Span]:
    """The turn's steps, 0 at the last voiced frame."""
    spans = [_Span("endpointing", "endpointing", 0, latency.endpointing_ms)]
    candidate_ms = candidate.silence_ms if candidate else latency.candidate_silence_ms
    if candidate or latency.candidate_silence_ms:
        spans.append(_Span("candidate", "pause noticed", candidate_ms, candidate_ms, True))
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
    agent_at = max(0, synthesis_at - latency.agent_ms)
    spans.append(_Span("agent", "agent's reply", agent_at, latency.agent_ms))
    spans.append(_Span("synthesis", "voice synthesis", synthesis_at, latency.synthesis_ms))
    spans.append(_Span("first-audio", "first audio", latency.total_ms, latency.total_ms, True))
    return spans


def _decision_text(decided: TurnDecided | None) -> str | None:
    """Why the turn ended when it did, in a caller's words: what the words and the model said."""
    if decided is None:
        return None
    silence = f"{decided.silence_ms} ms"
    model = (
        f"the turn model put it at {round(100 * decided.model_probability)}% that you were done"
        if decided.model_probability is not None
        else None
    )
    if decided.reason.startswith("silence reached"):
        # The fallback: nothing earlier was sure enough, so the agent waited the longest pause.
        match decided.transcript_signal, model:
            case "incomplete", _:
                why = "your words sounded unfinished"
            case _, str(said):
                why = f"the words left it open and {said}, not enough to answer sooner"
            case "complete", None:
                why = "no earlier pause was judged"
            case _:
                why = "no transcript was ready earlier to judge the words by"
        return f"The agent waited the full {silence} pause before answering: {why}."
    match decided.transcript_signal:
        case "complete":
            words = "your words were a finished request"
        case "incomplete":
            words = "your words sounded unfinished"
        case _:
            words = "your words did not show whether you had finished"
    joiner = "but" if decided.transcript_signal == "incomplete" else "and"
    joined = f"{words}, {joiner} {model}" if model else words
    return f"The agent answered after a {silence} pause: {joined}."
