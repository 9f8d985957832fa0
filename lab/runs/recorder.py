"""A voice run's recording as it happens: caller frames and agent audio onto the run's clock,
appended to the store as the window behind them closes, sealed with recording.closed at the end.

The run's clock zero is run.started's `at`; loop times are mapped onto it once, so a run resumed
on another process keeps its recording's timeline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime

from django.conf import settings

from lab.audio.frames import SAMPLE_RATE
from lab.audio.recording import (
    CHANNELS,
    FRAME_BYTES_STEREO,
    WAV_HEADER_BYTES,
    StereoMix,
)
from lab.events.recording_events import AgentSpanRef, CallerPieceRef, RecordingClosed
from lab.runs import recording_files
from lab.runs.log import RunClosed
from lab.runs.session import RunSession

logger = logging.getLogger(__name__)

# Audio stays mixable this long: an interruption cuts the agent from where the caller began,
# and the browser's report of what it played comes after the stop. A crash loses at most this
# much plus one chunk.
HOLD_S = 2.0
CHUNK_S = 0.5
_MS = SAMPLE_RATE // 1000


class Recorder:
    """One voice link's share of its run's recording."""

    def __init__(self, session: RunSession) -> None:
        self.session = session
        self.mix = StereoMix(max_data_bytes=settings.LAB_RECORDING_MAX_BYTES - WAV_HEADER_BYTES)
        self.zero: float | None = None
        self.chunks: asyncio.Queue[tuple[int, bytes] | None] = asyncio.Queue()
        self.writer = asyncio.ensure_future(self._write_forever())
        self.sealed = False
        self.truncated = False
        # Samples of caller audio the voice path accepted: the stream vad.*'s stream_ms counts.
        self.caller_samples = 0

    def _sample(self, at: float) -> int | None:
        """Run-clock sample of a loop time; None until run.started gives the clock its zero."""
        if self.zero is None:
            started = next((e for e in self.session.events if e.type == "run.started"), None)
            if started is None:
                return None
            since_s = (datetime.now(UTC) - started.at).total_seconds()
            self.zero = self.session.now() - since_s
            # A resumed run's window opens now: what came before is already stored.
            opened = self.session.now() - self.zero - HOLD_S
            self.mix.written = max(0, round(opened * SAMPLE_RATE))
        return round((at - self.zero) * SAMPLE_RATE)

    def caller_frame(self, pcm: bytes, arrived: float) -> None:
        sample = self._sample(arrived)
        stream, self.caller_samples = self.caller_samples, self.caller_samples + len(pcm) // 2
        if sample is not None:
            self.mix.caller_frame(pcm, sample, stream)
            self._flush_due()

    def agent_audio(self, utterance_event_id: str, pcm: bytes, at: float) -> None:
        sample = self._sample(at)
        if sample is not None:
            self.mix.agent_audio(utterance_event_id, pcm, sample)
            self._flush_due()

    def agent_cut(self, at: float) -> None:
        sample = self._sample(at)
        if sample is not None:
            self.mix.agent_cut(sample)

    def agent_played(self, utterance_event_id: str, played_ms: int) -> None:
        self.mix.agent_played(utterance_event_id, played_ms * _MS)

    def _flush_due(self) -> None:
        now = self._sample(self.session.now())
        if now is None:
            return
        until = now - round(HOLD_S * SAMPLE_RATE)
        if until - self.mix.written >= CHUNK_S * SAMPLE_RATE:
            self._queue(self.mix.take(until))

    def _queue(self, data: bytes) -> None:
        start = self.mix.written * FRAME_BYTES_STEREO - len(data)
        if data:
            self.chunks.put_nowait((start, data))

    async def _write_forever(self) -> None:
        run_id = str(self.session.run.id)
        while (chunk := await self.chunks.get()) is not None:
            start, data = chunk
            try:
                cut = await asyncio.to_thread(
                    recording_files.recording_append,
                    run_id=run_id,
                    start_byte=start,
                    data=data,
                    max_file_bytes=settings.LAB_RECORDING_MAX_BYTES,
                )
            except OSError:
                # The call goes on without the rest of its recording rather than failing over it.
                logger.exception("recording chunk of run %s not stored", run_id)
                self.truncated = True
            else:
                self.truncated = self.truncated or cut

    async def aclose(self) -> None:
        """Store what is left in the window and stop writing (the run may go on elsewhere)."""
        if not self.writer.done():
            self._queue(self.mix.take_all())
            self.chunks.put_nowait(None)
        with contextlib.suppress(asyncio.CancelledError):
            await self.writer

    async def seal(self) -> None:
        """At the run's end: store the rest and record the file's digest (before run.ended)."""
        if self.zero is None or self.sealed:
            return
        self.sealed = True
        # Agent audio sent but due to play after the end was never heard.
        end = self._sample(self.session.now())
        if end is not None:
            self.mix.agent_cut(end)
            self._queue(self.mix.take(end))
        await self.aclose()
        try:
            sealed = await asyncio.to_thread(
                recording_files.recording_seal, str(self.session.run.id)
            )
        except OSError:
            # The run still ends; its log names no recording rather than a wrong one.
            logger.exception("recording of run %s not sealed", self.session.run.id)
            return
        if sealed is None:
            return
        samples = sealed.data_bytes // FRAME_BYTES_STEREO
        with contextlib.suppress(RunClosed):
            await self.session.record(
                RecordingClosed(
                    digest=sealed.digest,
                    bytes=sealed.file_bytes,
                    duration_ms=samples // _MS,
                    channels=CHANNELS,
                    sample_rate=SAMPLE_RATE,
                    truncated=self.truncated or self.mix.truncated,
                    caller_pieces=[
                        CallerPieceRef(stream_ms=p.stream // _MS, at_ms=p.at // _MS)
                        for p in self.mix.caller_pieces
                    ],
                    agent_spans=[
                        AgentSpanRef(
                            utterance_event_id=s.utterance_event_id,
                            start_ms=s.start // _MS,
                            end_ms=s.end // _MS,
                            played_ms=None if s.played is None else s.played // _MS,
                        )
                        for s in self.mix.agent_spans
                    ],
                )
            )
