"""A phone call's limits and what it measured, kept for runscenarios --calls to report on."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limits:
    handshake_s: float = 15.0
    # From the caller's last audio sent to the bot's first audio on the line.
    reply_s: float = 20.0
    # A greeting the bot may give before the caller speaks.
    greeting_s: float = 5.0
    # Silence on the line that ends one stretch of speech, and one that ends the bot's turn.
    stretch_gap_s: float = 0.7
    turn_quiet_s: float = 2.0
    # The longest a reply may go on, however the bot keeps talking.
    turn_s: float = 120.0


@dataclass
class CallStats:
    """What the call measured, on the line's clock: per reply, caller's audio end → bot audio."""

    latencies_ms: list[int] = field(default_factory=list)
    encode_ms: float = 0.0
    decode_ms: float = 0.0
    frames_sent: int = 0
    frames_late: int = 0
    clears: int = 0
    gaps_ms: int = 0  # silence the bot's late chunks left inside its stretches of speech
    marks_acknowledged: int = 0


# Every call this process connected, for runscenarios --calls to report on (bounded).
FINISHED: list[tuple[str, CallStats]] = []
FINISHED_KEPT = 1000
