"""The bot's side of a phone call as the network plays it (pure: every time is handed in).

A phone network buffers what a bot sends and plays it in real time, so each chunk starts when it
arrives or when the audio before it ends, whichever is later; a `mark` is played where it sits
in that queue and acknowledged then; `clear` empties the queue (its marks are acknowledged at
once, as Twilio does). Stretches of speech are what the lab hears as one utterance each.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

RATE = 16_000
BYTES_PER_SECOND = RATE * 2
VOICED = 300  # peak of a 20 ms piece above which it is speech, not line noise


class BotMisbehaved(Exception):
    """What the bot sent cannot be played as a phone network would play it."""


class CallNotAnswered(Exception):
    """The bot's answer to the call (a voice webhook's TwiML) led to no media stream."""


@dataclass
class Stretch:
    """One stretch of the bot's speech: its audio and when it played on the line."""

    started_s: float
    pcm: bytearray = field(default_factory=bytearray)
    # The same audio as the bot sent it, without the gaps its late chunks left on the line:
    # what the lab hears its words from (a bot starved of CPU stutters, its words do not change).
    sent: bytearray = field(default_factory=bytearray)
    gaps_ms: int = 0
    voiced_end_s: float = 0.0
    cleared: bool = False

    @property
    def ended_s(self) -> float:
        return self.started_s + len(self.pcm) / BYTES_PER_SECOND


@dataclass
class BotSpeech:
    """The line's playback queue and the stretches heard from it."""

    max_ahead_s: float = 30.0
    play_end_s: float = 0.0
    marks: list[tuple[str, float]] = field(default_factory=list)
    current: Stretch | None = None
    first_audio_s: float | None = None
    received_s: float = 0.0

    def audio(self, pcm: bytes, at_s: float) -> None:
        """A chunk of the bot's audio (16 kHz PCM16) arrived at at_s."""
        start = max(at_s, self.play_end_s)
        if start - at_s > self.max_ahead_s:
            raise BotMisbehaved(
                f"the bot sent audio more than {self.max_ahead_s:g} s ahead of real time"
            )
        self.received_s += len(pcm) / BYTES_PER_SECOND
        if self.current is None:
            self.current = Stretch(started_s=start)
            if self.first_audio_s is None:
                self.first_audio_s = start
        elif start > self.current.ended_s:
            # A gap the bot left mid-stretch plays as silence on the line.
            gap = round((start - self.current.ended_s) * RATE) * 2
            self.current.pcm.extend(bytes(gap))
            self.current.gaps_ms += gap * 1000 // BYTES_PER_SECOND
        samples = np.frombuffer(pcm, dtype="<i2")
        if samples.size and int(np.abs(samples.astype(np.int32)).max()) > VOICED:
            self.current.voiced_end_s = start + samples.size / RATE
        self.current.pcm.extend(pcm)
        self.current.sent.extend(pcm)
        self.play_end_s = start + samples.size / RATE

    def mark(self, name: str, at_s: float) -> None:
        self.marks.append((name, max(at_s, self.play_end_s)))

    def due_marks(self, now_s: float) -> list[str]:
        """Marks whose audio has played by now, in order."""
        due = [name for name, when in self.marks if when <= now_s]
        self.marks = [(name, when) for name, when in self.marks if when > now_s]
        return due

    def clear(self, now_s: float) -> list[str]:
        """Drop what has not played; every pending mark is acknowledged now."""
        if self.current is not None:
            # Also when its audio had all played: a bot stops sending, then clears.
            self.current.cleared = True
        if self.current is not None and self.play_end_s > now_s:
            played = max(0, round((now_s - self.current.started_s) * RATE)) * 2
            # What had not played holds no gap: a gap is only ever left before now.
            unplayed = len(self.current.pcm) - played
            del self.current.pcm[played:]
            del self.current.sent[max(0, len(self.current.sent) - unplayed) :]
            self.current.voiced_end_s = min(self.current.voiced_end_s, now_s)
        self.play_end_s = min(self.play_end_s, now_s)
        names = [name for name, _ in self.marks]
        self.marks = []
        return names

    def speaking(self, now_s: float) -> bool:
        return self.play_end_s > now_s

    def finished_stretch(self, now_s: float, gap_s: float) -> Stretch | None:
        """The current stretch, once the line has been quiet gap_s after it; else None."""
        stretch = self.current
        if stretch is None or now_s < stretch.ended_s + gap_s:
            return None
        self.current = None
        return stretch
