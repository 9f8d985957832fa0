"""When each mic frame was captured, on the clock its arrivals are read on.

Pure: stream positions and arrival times in, capture times out. A frame's stream position is
continuous audio, so capture time is position plus an offset that holds until the client really
pauses (or the path gets longer). The offset is the least delay seen (a frame never arrives before
it was captured), so a loop that stalls and then takes a backlog in a burst, or falls behind and
reads each frame later than the last, shifts nothing: the frames are still the audio they were.
Only late frames that keep the lateness they jumped to, arriving at the rate they were captured,
are a pause; the offset then moves up, from the pause on. (Lateness that built up frame by frame
and then held is a loop that fell behind and keeps pace there.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Frames no later than this past the floor are on time: network jitter and a loop's slack.
LATE_MS = 40
# A run of late frames is read once it is this long: by then a backlog has been coming in faster
# than real time (its delays fall back), a loop behind has read slower than it (they grow), or the
# lateness has held (a pause).
PAUSE_FRAMES = 8
# A pause holds its lateness: the least delays of each pair of frames in the run are this close
# (a pair, so a frame read late now and then does not hide a pause). A clock's drift moves them by
# a fraction of a millisecond; a loop catching up or falling behind by 5 ms a frame moves them
# further, and so does the turn from falling behind to catching up.
HOLD_MS = 15


@dataclass
class MicClock:
    """The mic's capture times: offsets by stream position, re-anchored only at real pauses."""

    # How far back (stream ms) capture times are still asked for.
    keep_ms: int = 20_000
    # (first stream ms, offset s) from the oldest kept to the current one.
    anchors: list[tuple[int, float]] = field(default_factory=list)
    # The late frames in a row just seen, (stream ms, delay s), and the delay they last jumped to.
    late: list[tuple[int, float]] = field(default_factory=list)
    late_from: float = 0.0

    def arrived(self, stream_ms: int, at: float) -> None:
        """The frame at `stream_ms` arrived at `at` (seconds on the reading clock)."""
        delay = at - stream_ms / 1000
        if not self.anchors:
            self.anchors.append((stream_ms, delay))
            return
        start, floor = self.anchors[-1]
        if delay <= floor + LATE_MS / 1000:
            # Earlier than the floor allowed: the whole stretch since the anchor was this early.
            self.anchors[-1] = (start, min(floor, delay))
            self.late.clear()
            return
        if not self.late or delay - self.late[-1][1] > LATE_MS / 1000:
            self.late_from = delay
        self.late.append((stream_ms, delay))
        if self._paused():
            self._reanchor()
        del self.late[: -PAUSE_FRAMES * 4]

    def captured(self, stream_ms: int, *, last_pause: bool = True) -> float:
        """When the frame at `stream_ms` was captured (before any arrival: at its position).

        With `last_pause=False`, as if the latest pause were a backlog read at the rate it was
        captured: the arrivals of the two look alike (a loop that reads no faster than real time).
        """
        anchors = self.anchors if last_pause else self.anchors[:-1]
        offset = next((o for start, o in reversed(anchors) if start <= stream_ms), None)
        if offset is None:
            offset = anchors[0][1] if anchors else 0.0
        return stream_ms / 1000 + offset

    @property
    def paused(self) -> bool:
        """Whether the clock has taken some late run for a pause."""
        return len(self.anchors) > 1

    @property
    def settled(self) -> bool:
        """Whether the latest frames' capture times are known: no late run still unread."""
        return not self.late or len(self.late) >= PAUSE_FRAMES

    def _paused(self) -> bool:
        if len(self.late) < PAUSE_FRAMES:
            return False
        recent = [delay for _, delay in self.late[-PAUSE_FRAMES:]]
        pairs = [min(recent[index : index + 2]) for index in range(0, PAUSE_FRAMES, 2)]
        stepped = self.late_from >= min(pairs) - LATE_MS / 1000
        return stepped and max(pairs) - min(pairs) <= HOLD_MS / 1000

    def _reanchor(self) -> None:
        offset = min(delay for _, delay in self.late[-PAUSE_FRAMES:])
        # The pause began at the first of the late frames none earlier than the new offset;
        # before those, a backlog still on the old one.
        first = len(self.late)
        while first > 0 and self.late[first - 1][1] >= offset - LATE_MS / 1000:
            first -= 1
        self.anchors.append((self.late[first][0], offset))
        self.late.clear()
        horizon = self.anchors[-1][0] - self.keep_ms
        while len(self.anchors) > 1 and self.anchors[1][0] <= horizon:
            self.anchors.pop(0)
