"""What each side of the side-by-side heard and did per caller line, on one clock."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from lab.events.types import TurnLatency


@dataclass
class Line:
    """One caller line as a side heard and answered it; times in seconds on one clock."""

    text: str
    began: float
    ended: float
    turn_stops: list[float] = field(default_factory=list)
    replies: list[float] = field(default_factory=list)
    transcripts: list[str] = field(default_factory=list)
    first_audio: float | None = None
    # The lab's own latency chain of the line's turn (pipecat has none).
    latency: TurnLatency | None = None
    # When the line's last transcript before its turn stopped came (pipecat's side).
    heard_at: float | None = None

    @property
    def heard_ms(self) -> float | None:
        """The last voiced sample to the first agent audio."""
        return None if self.first_audio is None else (self.first_audio - self.ended) * 1000

    @property
    def candidate_ms(self) -> float | None:
        """When the lab raised its turn candidate, after the last voiced sample."""
        latency, heard = self.latency, self.heard_ms
        if latency is None or heard is None or not latency.candidate_silence_ms:
            return None
        # total_ms counts from webrtcvad's voiced end; the candidate came its silence after it.
        return heard - latency.total_ms + latency.candidate_silence_ms

    @property
    def transcript_ms(self) -> float | None:
        """When the words the turn was decided on were there, after the last voiced sample."""
        if self.heard_at is not None:
            return (self.heard_at - self.ended) * 1000
        latency, heard = self.latency, self.heard_ms
        if latency is None or heard is None:
            return None
        if self.candidate_ms is not None:
            return self.candidate_ms + latency.recognition_tail_ms
        return heard - latency.total_ms + latency.endpointing_ms + latency.recognition_ms

    @property
    def cut(self) -> bool:
        """Heard as more than one turn, or a turn ended before the caller's last voiced sample."""
        return len(self.turn_stops) > 1 or any(t < self.ended for t in self.turn_stops)

    @property
    def partial(self) -> bool:
        """A reply was begun before the caller's last turn of the line had ended."""
        if not self.turn_stops:
            return False
        last_stop = max(self.turn_stops)
        for reply in self.replies:
            before = [t for t in self.turn_stops if t <= reply]
            if before and (max(before) < self.ended or reply < last_stop):
                return True
        return False

    @property
    def exact(self) -> bool:
        return words(" ".join(self.transcripts)) == words(self.text)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def windows(lines: list[Line], stamps: Sequence[float]) -> list[list[float]]:
    """Each stamp in the window of the line it falls in: from a line's start to the next's."""
    bounds = [line.began for line in lines[1:]] + [float("inf")]
    return [
        [t for t in stamps if line.began <= t < end]
        for line, end in zip(lines, bounds, strict=True)
    ]


def attach(lines: list[Line], stops: list[float], replies: list[float], audio: list[float]) -> None:
    for line, line_stops, line_replies, line_audio in zip(
        lines, windows(lines, stops), windows(lines, replies), windows(lines, audio), strict=True
    ):
        line.turn_stops, line.replies = line_stops, line_replies
        line.first_audio = next((t for t in line_audio if t >= line.ended), None)


@dataclass
class Pass:
    config: str
    variant: str
    lines: list[Line]
    cpu_s: float
    peak_rss_mib: float
    load: tuple[float, float]
    chain: dict[str, list[float]] = field(default_factory=dict)
