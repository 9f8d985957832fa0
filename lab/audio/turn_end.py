"""The end-of-turn decision: a short-silence candidate weighed with the audio model and words.

Pure: the evidence is given as data; no model, no clock. Whatever the evidence, a silence of
`fallback_ms` ends the turn, so no caller waits longer than the silence-only endpointer made them.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.events.speech_events import TranscriptSignal


@dataclass(frozen=True, slots=True)
class TurnEndConfig:
    """Silences in ms; probabilities are the model's P(turn complete)."""

    candidate_ms: int = 200
    fallback_ms: int = 500
    # With words that are a finished request, the model need only not object strongly: on
    # piper's voice it gave finished lines 0.19-0.46 after 200 ms of silence.
    supported_at: float = 0.1
    # With no word signal, the model decides alone at its own boundary.
    complete_at: float = 0.5
    # Words that trail off ("and", "um", half a number) yield only to a near-certain model:
    # it gave lines cut midway up to 0.97.
    confident_at: float = 0.98

    def __post_init__(self) -> None:
        if not 0 < self.candidate_ms <= self.fallback_ms:
            raise ValueError(
                f"need 0 < candidate_ms <= fallback_ms, got {self.candidate_ms}, {self.fallback_ms}"
            )
        if not 0.0 <= self.supported_at <= self.complete_at <= self.confident_at <= 1.0:
            raise ValueError("need 0 <= supported_at <= complete_at <= confident_at <= 1")


@dataclass(frozen=True, slots=True)
class TurnEvidence:
    """What is known at one moment of a caller's pause; probability None: no model ran."""

    silence_ms: int
    probability: float | None
    signal: TranscriptSignal


@dataclass(frozen=True, slots=True)
class TurnVerdict:
    complete: bool
    reason: str


def decide(evidence: TurnEvidence, config: TurnEndConfig) -> TurnVerdict:
    """Complete or wait; complete for certain once the silence reaches the fallback."""
    silence, p, signal = evidence.silence_ms, evidence.probability, evidence.signal
    if silence >= config.fallback_ms:
        return TurnVerdict(True, f"silence reached the {config.fallback_ms} ms fallback")
    if silence < config.candidate_ms:
        return TurnVerdict(False, f"silence under the {config.candidate_ms} ms candidate")
    said = "no model" if p is None else f"model {p:.2f}"
    match signal:
        case "complete":
            if p is None or p >= config.supported_at:
                return TurnVerdict(True, f"finished request, {said}")
            return TurnVerdict(False, f"finished request but {said} < {config.supported_at}")
        case "incomplete":
            if p is not None and p >= config.confident_at:
                return TurnVerdict(True, f"words trail off but {said} >= {config.confident_at}")
            return TurnVerdict(False, f"words trail off, {said}")
        case _:
            if p is not None and p >= config.complete_at:
                return TurnVerdict(True, f"{said} >= {config.complete_at}")
            return TurnVerdict(False, f"no word signal, {said}")
