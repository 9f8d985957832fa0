"""A caller line streamed over the bot's readback, at the scenario's point in the bot's audio.

While a barge-in is planned, the lab listens to each stretch of the bot's speech as it plays (a
recognition every CHECK_EVERY_S of it) until what the bot has said reads as a readback. On a busy
CPU a recognition can take longer than the readback lasts, so a stretch that began after one of
the bot's lookups answered with options (at the lab's sandbox: the bot can only read back what
an answer gave it) is taken as the readback once CUE_GRACE_S more than into_ms of it has played
unrecognized: the grace lets a filler said ahead of the readback ("one moment while I check")
pass first. Either way the verdict rests on the words heard afterwards, not on the cue: a line cut
into a stretch that read as no readback proves nothing, and the evaluator says so. The caller's
line goes on the line once into_ms of the readback's own audio has played (gaps a stuttering bot
left on the line not counted), or at once where recognizing took longer (recorded as late_ms).
What the bot did about it (its `clear`, or its audio running on) is measured on the line's
playback clock, never on arrival times.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import numpy as np

from lab.connectors.interface import PlannedBargeIn
from lab.connectors.phone_speech import BYTES_PER_SECOND, RATE, VOICED, Stretch
from lab.events.phone_events import PhoneBargeIn

# A readback is first listened for once this much of a stretch has played, then again each time
# this much more has (one recognition at a time: on a loaded CPU each takes seconds).
CHECK_FIRST_S = 0.6
CHECK_EVERY_S = 0.25
# How much longer than into_ms a stretch begun after a lookup's answer plays before it is taken as
# the readback unrecognized: a bot's short filler and the first words of its offer fit in it.
CUE_GRACE_S = 1.5
_PIECE = RATE // 50 * 2  # 20 ms of PCM16


def voiced_part(pcm: bytes) -> bytes:
    """pcm from its first voiced 20 ms piece to the end of its last: the caller's speech itself."""
    samples = np.frombuffer(pcm[: len(pcm) - len(pcm) % _PIECE], dtype="<i2")
    peaks = np.abs(samples.astype(np.int32)).reshape(-1, _PIECE // 2).max(axis=1)
    voiced = np.flatnonzero(peaks > VOICED)
    if not voiced.size:
        return pcm
    return pcm[int(voiced[0]) * _PIECE : (int(voiced[-1]) + 1) * _PIECE]


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


class BargeIn:
    """One planned barge-in: when it goes on the line, and what it measured there."""

    def __init__(
        self,
        plan: PlannedBargeIn,
        pcm: bytes,
        hear: Callable[[bytes], Awaitable[str]],
        *,
        planned_s: float,
    ):
        self.plan = plan
        self.planned_s = planned_s
        self.pcm = voiced_part(pcm)
        self._hear = hear
        self._listened: Stretch | None = None
        self._checked_s = 0.0
        self._check: asyncio.Future[str] | None = None
        self.target: Stretch | None = None
        # The bot's speech since its lookup answered, in the stretches before the current one,
        # and how much of it preceded the target (counted into its point).
        self._cued_before_s = 0.0
        self._offset_s = 0.0
        self.spoken = False
        self.into_s = plan.into_ms / 1000
        self.spoken_into_s = 0.0  # how much of the readback had played when it went out
        # When its first frame went out on the line (the sender says).
        self.started_s: float | None = None

    @property
    def voiced_s(self) -> float:
        return len(self.pcm) / BYTES_PER_SECOND

    def due(self, stretch: Stretch | None, now_s: float) -> bool:
        """Whether the caller's line goes on the line now (once): stretch is the bot's current."""
        if self.spoken:
            return False
        if self.target is None:
            self._listen(stretch, now_s)
            return False
        if self.target is not stretch:
            # The readback ended (the line went quiet after it) before its point came.
            self.target, self._offset_s = None, 0.0
            return False
        played_s = self._offset_s + _audio_played_s(stretch, now_s)
        self.spoken = played_s >= self.into_s
        self.spoken_into_s = played_s
        if self.spoken:
            self.plan.on_spoken()
        return self.spoken

    def _listen(self, stretch: Stretch | None, now_s: float) -> None:
        if stretch is not self._listened:
            if self._listened is not None and self._after_answer(self._listened):
                # A bot starved of CPU leaves gaps that split its readback into stretches: the
                # cue counts all it said since the answer.
                self._cued_before_s += len(self._listened.sent) / BYTES_PER_SECOND
            self.close()
            self._listened, self._checked_s = stretch, 0.0
        if stretch is None:
            return
        cued_s = self._cued_before_s + _audio_played_s(stretch, now_s)
        if self._after_answer(stretch) and cued_s >= self.into_s + CUE_GRACE_S:
            self.target, self._offset_s = stretch, self._cued_before_s
            return
        if self._check is not None:
            if not self._check.done():
                return
            check, self._check = self._check, None
            if check.exception() is None and self.plan.is_readback(check.result()):
                self.target = stretch
            return
        played_s = min(now_s, stretch.ended_s) - stretch.started_s
        if played_s >= max(CHECK_FIRST_S, self._checked_s + CHECK_EVERY_S):
            self._checked_s = played_s
            self._check = asyncio.ensure_future(self._hear(bytes(stretch.pcm[: _bytes(played_s)])))

    def _after_answer(self, stretch: Stretch) -> bool:
        """Whether stretch began after a lookup that answered since the plan (a filler the bot
        began while its lookup ran is not the readback)."""
        answered_s = self.plan.answered_s()
        return answered_s is not None and self.planned_s < answered_s <= stretch.started_s

    def measured(self, stretch: Stretch) -> PhoneBargeIn | None:
        """The barge-in's timing once the stretch it cut into is over; None for any other."""
        if stretch is not self.target or self.started_s is None:
            return None
        start, bot_end = self.started_s, stretch.ended_s
        return PhoneBargeIn(
            into_ms=_ms(self.spoken_into_s),
            late_ms=_ms(self.spoken_into_s - self.into_s),
            response_ms=_ms(bot_end - start),
            talk_over_ms=_ms(min(bot_end, start + self.voiced_s) - start),
            cleared=stretch.cleared,
        )

    def close(self) -> None:
        if self._check is not None:
            self._check.cancel()
            self._check = None


def _audio_played_s(stretch: Stretch, now_s: float) -> float:
    """How much of the bot's own audio in stretch has played by now_s (what is queued past now
    is the end of what it sent)."""
    return len(stretch.sent) / BYTES_PER_SECOND - max(0.0, stretch.ended_s - now_s)


def _bytes(seconds: float) -> int:
    return round(seconds * RATE) * 2
