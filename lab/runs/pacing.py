"""The real-time guard on caller audio: a client may not send audio faster than real time.

Pure: times are plain seconds supplied by the caller, who reads them as each frame arrives
(the socket, lab/web/consumers.py), never when the voice path gets round to the frame: a server
loading its models, or behind on a busy core, would otherwise see a flood as real time. A frame
is measured against when the client could at the earliest have sent it: frames a client sent in
real time while the server's loop stalled arrive together afterwards, and that burst only makes
up for the stall. Deficits older than BANK_S are forgotten, so a client that went quiet cannot
bank credit for long. The clock starts at the first frame: nothing is banked before it.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.audio.frames import FRAME_MS

# How far ahead of real time a client may push audio before it is refused.
MAX_AHEAD_S = 3.0
# How long a stall (the server's, or a silent client's) may be made up for by a burst.
BANK_S = 10.0


@dataclass
class AudioPacer:
    """The client's audio clock: how much audio it has sent, measured in real time."""

    clock: float | None = None

    def push(self, now: float) -> float:
        """Account for one 20 ms frame read at now; returns how far ahead of real time it is."""
        if self.clock is None:
            self.clock = now
        self.clock = max(self.clock, now - BANK_S) + FRAME_MS / 1000
        return self.clock - now

    def too_fast(self, now: float) -> bool:
        return self.push(now) > MAX_AHEAD_S
