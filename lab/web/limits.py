"""How much a socket may send: one budget for rejected input (audio and text alike) and a
pace for valid messages. Pure: the caller supplies the time."""

from __future__ import annotations

from dataclasses import dataclass

# The first few rejections are each reported and recorded, then one in REPORT_EVERY, so a
# broken or hostile client cannot flood the log; past LIMIT the socket is closed.
REPORT_FIRST = 3
REPORT_EVERY = 50
LIMIT = 200
# Valid text messages: a burst of this many, then this many per second (a person types far
# slower; the headless runner sends one "play").
MESSAGE_BURST = 20
MESSAGES_PER_S = 5.0


@dataclass(frozen=True)
class Rejection:
    count: int
    report: bool
    close: bool


class InputBudget:
    def __init__(self) -> None:
        self.rejected = 0
        self._tokens = float(MESSAGE_BURST)
        self._at: float | None = None

    def reject(self) -> Rejection:
        """Count one rejected input; say whether to report it and whether to close."""
        self.rejected += 1
        count = self.rejected
        report = count <= REPORT_FIRST or count % REPORT_EVERY == 0
        return Rejection(count=count, report=report, close=count >= LIMIT)

    def message(self, now: float) -> bool:
        """Spend one valid message from the bucket; False when the client sends too fast."""
        if self._at is not None:
            self._tokens = min(MESSAGE_BURST, self._tokens + (now - self._at) * MESSAGES_PER_S)
        self._at = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True
