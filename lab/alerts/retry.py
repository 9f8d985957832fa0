"""When a failed delivery is tried again: exponential backoff with jitter, then give up.

Pure: the jitter (a number in [0, 1)) is handed in.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    base_s: float
    cap_s: float
    max_attempts: int

    def __post_init__(self) -> None:
        if not 0 < self.base_s <= self.cap_s:
            raise ValueError(f"backoff needs 0 < base ({self.base_s}) <= cap ({self.cap_s})")
        if self.max_attempts < 1:
            raise ValueError(f"max attempts must be at least 1, got {self.max_attempts}")

    def gives_up(self, attempts: int) -> bool:
        """Whether a message that failed attempts times is dead."""
        return attempts >= self.max_attempts

    def delay_s(self, attempts: int, jitter: float) -> float:
        """Seconds before the next try after the attempts-th failure.

        Half the doubled delay is fixed and half random, so retries grow and endpoints that
        failed together do not come back in step.
        """
        if not 0 <= jitter < 1:
            raise ValueError(f"jitter must lie in [0, 1), got {jitter}")
        ceiling = min(self.cap_s, self.base_s * 2.0 ** max(attempts - 1, 0))
        return ceiling / 2 + ceiling / 2 * jitter
