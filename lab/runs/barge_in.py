"""Barge-in: what caller speech over the agent's audio does (interrupt, backchannel or echo).

Speech that starts while the agent is audible does not cut it at once. It interrupts as soon as
it proves to be the caller taking the floor: longer than an acknowledgement, not the agent's own
voice coming back through the mic, or a transcript with content. A short acknowledgement
("mm-hmm") is recorded as caller.backchannel and never reaches the agent; echo is recorded as
voice.echo_ignored. Unguarded runs keep the naive habit: any caller speech that is not echo cuts
the agent, and every transcript reaches it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from lab.audio.echo import (
    HOP_MS,
    LAG_SLACK_HOPS,
    MAX_LAG_MS,
    NO_MATCH,
    EchoMatch,
    Envelope,
    echo_match,
    envelope,
    has_caller,
)
from lab.audio.frames import FRAME_MS
from lab.audio.mic_clock import MicClock
from lab.events.types import CallerBackchannel, EchoIgnored, Event
from lab.language.backchannel import MAX_VOICED_MS, is_backchannel, words_beyond
from lab.runs.log import RunClosed
from lab.runs.surface import SpeakingRun

BYTES_PER_SECOND = 32000
# The echo check looks at the last ECHO_WINDOW_MS of the caller's speech, first once
# ECHO_FIRST_MS of it is voiced, then again every ECHO_EVERY_MS.
ECHO_WINDOW_MS = 500
ECHO_FIRST_MS = 200
ECHO_EVERY_MS = 100
# One window in about 40 of echo alone looks like a caller over it (the player's timing slips);
# two in a row almost never do, while a caller over the echo shows in 9 windows of 10.
CALLER_CHECKS = 2
# A caller's speech over the echo shows in the checks from its start until a window after its
# end: the span of those checks less this is how long they spoke (speechlike 0.5-1.2 s).
CALLER_SMEAR_MS = ECHO_WINDOW_MS - ECHO_EVERY_MS
# How much mic and agent audio is kept: a segment's voiced length and a few echo windows.
KEEP_S = 20.0
# A turn's start (TT's segment) may include the VAD pre-roll before the speech start.
START_SLACK_MS = 500
_HOPS_PER_FRAME = FRAME_MS // HOP_MS
_LAG_HOPS = MAX_LAG_MS // HOP_MS
# A window read at the echo's shift is read this far either side of it.
_SLACK_S = LAG_SLACK_HOPS * HOP_MS / 1000


@dataclass
class Overlap:
    """Caller speech that began while the agent was audible, not yet judged."""

    # The vad.speech_started event, once written: the frame path hands it over and goes on.
    started: asyncio.Future[Event]
    stream_ms: int
    utterance_id: str
    # When the start was declared: a later decision to interrupt cuts the agent from here,
    # since whatever it said after that was said over the caller.
    started_at: float
    voiced_ms: int = 0
    next_check_ms: int = ECHO_FIRST_MS
    # Taken for the agent's echo (recorded once) until a window shows a caller over it. The mic
    # frame at stream second s holds the agent audio played at s + echo_shift_s: capture offset
    # less the echo's lag, so it holds however the mic's clock is read.
    echo: bool = False
    echo_shift_s: float = 0.0
    # Checks in a row that heard more than the echo: CALLER_CHECKS of them end the echo.
    caller_checks: int = 0
    # Guarded, a caller heard over the echo: the first and latest checks that heard them.
    caller_first_ms: int | None = None
    caller_last_ms: int = 0
    interrupted: bool = False

    @property
    def caller_over_echo_ms(self) -> int:
        """How long the caller has spoken over the echo, as the echo checks heard them."""
        if self.caller_first_ms is None:
            return 0
        span = self.caller_last_ms - self.caller_first_ms + ECHO_EVERY_MS
        return max(0, span - CALLER_SMEAR_MS)


class Playout:
    """The agent audio the caller's player plays: each chunk after the one before it."""

    def __init__(self) -> None:
        self.chunks: deque[tuple[float, Envelope]] = deque()
        self.end = 0.0

    def add(self, pcm: bytes, sent_at: float) -> None:
        start = max(sent_at, self.end)
        self.chunks.append((start, envelope(pcm)))
        self.end = start + len(pcm) / BYTES_PER_SECOND
        while self.chunks and self.chunks[0][0] + KEEP_S < start:
            self.chunks.popleft()

    def stop(self, at: float) -> None:
        """A cut: the player drops what it had not played yet."""
        kept: deque[tuple[float, Envelope]] = deque()
        for start, env in self.chunks:
            if start < at:
                kept.append((start, env[: max(0, round((at - start) * 1000 / HOP_MS))]))
        self.chunks, self.end = kept, min(self.end, at)

    def between(self, start: float, hops: int) -> Envelope:
        """The agent's envelope from `start`, `hops` 10 ms hops of it (zero where silent)."""
        out = np.zeros(hops)
        for chunk_start, env in self.chunks:
            offset = round((chunk_start - start) * 1000 / HOP_MS)
            lo, hi = max(0, offset), min(hops, offset + len(env))
            if lo < hi:
                out[lo:hi] = env[lo - offset : hi - offset]
        return out


class BargeIn:
    """Decides what caller speech does to the agent's audio; the voice path calls its hooks."""

    def __init__(self, session: SpeakingRun) -> None:
        self.session = session
        self.guarded = session.careful_barge_in
        # Guarded, speech this long is an interruption; unguarded, whatever three echo checks
        # did not find to be echo.
        self.bound_ms = MAX_VOICED_MS if self.guarded else ECHO_FIRST_MS + 2 * ECHO_EVERY_MS
        self.overlaps: list[Overlap] = []
        self.playout = Playout()
        frames = round(KEEP_S * 1000 / FRAME_MS)
        # (stream ms, voiced, envelope); when each was captured, on the loop clock, is the mic
        # clock's to say (it learns that from the frames' arrivals, and revises it at a pause).
        self.mic: deque[tuple[int, bool, Envelope]] = deque(maxlen=frames)
        self.mic_clock = MicClock(keep_ms=round(KEEP_S * 1000))
        self.tasks: set[asyncio.Task[None]] = set()

    # -- the hooks ------------------------------------------------------------------------------

    async def speech_started(self, started: asyncio.Future[Event], stream_ms: int) -> None:
        """Caller speech began: while the agent is audible, judge it before cutting."""
        utterance_id = playing_utterance(self.session)
        old = stream_ms - KEEP_S * 1000
        self.overlaps = [o for o in self.overlaps if o.stream_ms >= old]
        if utterance_id is None:
            return
        self.overlaps.append(Overlap(started, stream_ms, utterance_id, self.session.now()))
        # Frames before the start was declared are voiced speech of this overlap too.
        overlap = self.overlaps[-1]
        overlap.voiced_ms = sum(
            FRAME_MS for ms, voiced, *_ in self.mic if voiced and ms >= stream_ms
        )
        self._judge(overlap)

    def frame(self, frame_pcm: bytes, voiced: bool, stream_ms: int) -> None:
        """One caller frame after VAD: count voiced speech over the agent and check for echo."""
        self.mic_clock.arrived(stream_ms, self.session.now())
        self.mic.append((stream_ms, voiced, envelope(frame_pcm)))
        if not self.overlaps:
            return
        overlap = self.overlaps[-1]
        if voiced and stream_ms >= overlap.stream_ms:
            overlap.voiced_ms += FRAME_MS
            self._judge(overlap)

    async def absorbs(self, text: str, segment_start_ms: int, segment_end_ms: int) -> bool:
        """Whether a decided turn's transcript is a backchannel or echo, kept from the agent."""
        mine = [
            o
            for o in self.overlaps
            if segment_start_ms - START_SLACK_MS <= o.stream_ms <= segment_end_ms
        ]
        if not mine:
            return False
        self.overlaps = [o for o in self.overlaps if o not in mine]
        if any(o.interrupted for o in mine):
            return False
        over_echo = [o for o in mine if o.caller_first_ms is not None]
        if all(o.echo for o in mine) and not over_echo:
            return True
        voiced_ms = sum(o.caller_over_echo_ms if o in over_echo else o.voiced_ms for o in mine)
        # Over the echo, the transcript holds the agent's words as well as the caller's.
        said = words_beyond(text, self._agent_text(over_echo)) if over_echo else text
        if self.guarded and voiced_ms <= self.bound_ms and is_backchannel(said):
            await record_backchannel(
                self.session,
                text,
                mine[0].utterance_id,
                reason=f"an acknowledgement of {voiced_ms} ms voiced over the agent's speech",
            )
            return True
        await self._interrupt(mine[0])
        return False

    def _agent_text(self, overlaps: list[Overlap]) -> str:
        ids = {o.utterance_id for o in overlaps}
        return " ".join(item.text for item in self.session.timeline.queue if item.event_id in ids)

    def agent_audio(self, utterance_event_id: str, pcm: bytes, sent_at: float) -> None:
        """Agent audio left for the caller: the reference the mic is compared with."""
        self.playout.add(pcm, sent_at)

    async def settled(self) -> None:
        """Wait for the interruptions and records the frames started."""
        while self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)

    # -- judging ----------------------------------------------------------------------------------

    def _judge(self, overlap: Overlap) -> None:
        if overlap.interrupted:
            return
        # While the mic's timing is unread (late frames: a backlog or a pause?) the check waits.
        if overlap.voiced_ms >= overlap.next_check_ms and self.mic_clock.settled:
            overlap.next_check_ms = overlap.voiced_ms + ECHO_EVERY_MS
            match, shift, heard = self._check(overlap)
            overlap.caller_checks = overlap.caller_checks + 1 if heard else 0
            if heard and overlap.caller_first_ms is not None:
                overlap.caller_last_ms = overlap.voiced_ms
            if overlap.caller_checks >= CALLER_CHECKS and overlap.caller_first_ms is None:
                if not self.guarded:
                    self._spawn(self._interrupt(overlap))  # the caller talked over the echo
                    return
                # Guarded, it is judged as any caller over the agent: an acknowledgement is not
                # an interruption, speech that outlasts one is.
                overlap.caller_first_ms = overlap.voiced_ms - (CALLER_CHECKS - 1) * ECHO_EVERY_MS
                overlap.caller_last_ms = overlap.voiced_ms
            if overlap.caller_over_echo_ms > self.bound_ms:
                self._spawn(self._interrupt(overlap))
                return
            if match.is_echo:
                if not overlap.echo:
                    self._spawn(self._record_echo(overlap, match))
                # Followed as it wanders with the network's jitter.
                overlap.echo, overlap.echo_shift_s = True, shift
        if overlap.voiced_ms > self.bound_ms and not overlap.echo:
            self._spawn(self._interrupt(overlap))

    def _check(self, overlap: Overlap) -> tuple[EchoMatch, float, bool]:
        """The window's echo match and its shift, and whether it heard a caller over the echo.

        Where the mic's clock took a late run for a pause, the window is also read as if that run
        were a backlog (their arrivals can look alike): speech either reading explains as echo is
        not the caller's.
        """
        heard = False
        if overlap.echo:
            at_echo = self._window(lambda ms: ms / 1000 + overlap.echo_shift_s + _SLACK_S)
            heard = at_echo is not None and has_caller(*at_echo, LAG_SLACK_HOPS * HOP_MS)
        readings: list[tuple[EchoMatch, float]] = []
        for last_pause in (True, False) if self.mic_clock.paused else (True,):
            captured = partial(self.mic_clock.captured, last_pause=last_pause)
            if (window := self._window(captured)) is None:
                continue
            match = echo_match(*window)
            last_ms = self.mic[-1][0]
            readings.append((match, captured(last_ms) - last_ms / 1000 - match.lag_ms / 1000))
        echoes = [reading for reading in readings if reading[0].is_echo]
        if echoes:
            # The echo path's delay wanders, it does not jump: the reading nearest the shift
            # the echo was followed at is the one that read the clock right.
            match, shift = (
                min(echoes, key=lambda r: abs(r[1] - overlap.echo_shift_s))
                if overlap.echo
                else echoes[0]
            )
            return match, shift, False
        match, shift = max(readings, key=lambda r: r[0].score, default=(NO_MATCH, 0.0))
        return match, shift, heard

    def _window(self, lag_zero: Callable[[int], float]) -> tuple[Envelope, Envelope] | None:
        """The last ECHO_WINDOW_MS of mic audio, and what the agent played at each lag before
        `lag_zero` of each frame's stream position."""
        frames = list(self.mic)[-(ECHO_WINDOW_MS // FRAME_MS) :]
        if not frames or not self.playout.chunks:
            return None
        mic = np.concatenate([env for *_, env in frames])
        # Per frame, the agent's envelope from MAX_LAG_MS before its lag zero to its end.
        spans = [
            self.playout.between(lag_zero(ms) - MAX_LAG_MS / 1000, _LAG_HOPS + _HOPS_PER_FRAME)
            for ms, *_ in frames
        ]
        candidates = np.array(
            [
                np.concatenate([span[_LAG_HOPS - lag :][:_HOPS_PER_FRAME] for span in spans])
                for lag in range(_LAG_HOPS + 1)
            ]
        )
        return mic, candidates

    # -- acting ---------------------------------------------------------------------------------

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _interrupt(self, overlap: Overlap) -> None:
        if overlap.interrupted:
            return
        overlap.interrupted = True
        self.playout.stop(self.session.now())
        with contextlib.suppress(RunClosed):
            started = await overlap.started
            await self.session.interrupt(cause_event_id=started.id, at=overlap.started_at)

    async def _record_echo(self, overlap: Overlap, match: EchoMatch) -> None:
        with contextlib.suppress(RunClosed):
            await self.session.record(
                EchoIgnored(
                    during_utterance_event_id=overlap.utterance_id,
                    score=match.score,
                    reason=(
                        f"the mic matched the agent's audio {match.lag_ms} ms later "
                        f"(correlation {match.score:.2f}, {match.residual:.0%} left over)"
                    ),
                )
            )


def playing_utterance(session: SpeakingRun, at: float | None = None) -> str | None:
    """The agent utterance playing (or queued to play) now, or at `at`, if any."""
    now = session.now() if at is None else at
    return next((item.event_id for item in session.timeline.queue if item.end > now), None)


async def record_backchannel(
    session: SpeakingRun, text: str, utterance_id: str, *, reason: str
) -> None:
    """Record an acknowledgement the agent talked on through."""
    with contextlib.suppress(RunClosed):
        await session.record(
            CallerBackchannel(text=text, during_utterance_event_id=utterance_id, reason=reason)
        )


async def typed_backchannel(session: SpeakingRun, text: str, at: float | None = None) -> bool:
    """A typed line while the agent speaks (now, or at `at`): an acknowledgement is kept from the
    agent (guarded)."""
    playing = playing_utterance(session, at)
    if not session.careful_barge_in or playing is None or not is_backchannel(text):
        return False
    await record_backchannel(
        session, text, playing, reason="an acknowledgement typed over the agent's speech"
    )
    return True
