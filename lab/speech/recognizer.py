"""The recognition thread: one model thread that runs what lab/speech/scheduling.py picks next.

Replaces a first-come executor, where a decided turn's decode queued behind every other call's
speculation. Decided turns of several calls waiting together are decoded in one batch (one
encoder and decoder call costs about half as much per segment at four). Results go back to the
asking event loop; a cancelled ask leaves the queue.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from lab.speech import asr
from lab.speech.asr import Transcript
from lab.speech.scheduling import RecognitionQueue

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Asker:
    """Whose recognition this is: the call's stream, and whether a decided turn waits on it."""

    stream: str
    final: bool


# Set by the voice path (lab/runs/voice.py) for the work it starts: its frame path speculates,
# its turn loop waits on finals. An ask from anywhere else is a final of a stream of its own.
ASKER: ContextVar[Asker | None] = ContextVar("recognition_asker", default=None)


@dataclass(frozen=True, slots=True)
class Decode:
    """One segment to transcribe: run alone, or in a batch with others of the same prompt."""

    pcm: bytes
    prompt_free: bool = False

    def __call__(self) -> Transcript:
        # Keywords at their defaults are left out, as AsrOptions.keywords() leaves them.
        return asr.transcribe(self.pcm, **({"prompt_free": True} if self.prompt_free else {}))


def transcribe_batch(decodes: list[Decode]) -> list[Transcript]:
    """The batch the thread runs: one prompt for all (the thread batches only those alike)."""
    return asr.transcribe_many([d.pcm for d in decodes], prompt_free=decodes[0].prompt_free)


Batch = Callable[[list[Decode]], list[Transcript]]
_Work = tuple[Callable[[], Transcript], asyncio.AbstractEventLoop, "asyncio.Future[Transcript]"]


class Recognizer:
    """Recognitions of this process, one at a time, finals first."""

    def __init__(
        self,
        *,
        speculative_ttl_s: float,
        clock: Callable[[], float] = time.monotonic,
        batch: Batch | None = None,
        batch_max: int = 1,
        collect_s: float = 0.0,
    ) -> None:
        self._queue = RecognitionQueue(speculative_ttl_s=speculative_ttl_s)
        self._clock = clock
        self._batch, self._batch_max, self._collect_s = batch, batch_max, collect_s
        # How many decodes each batch held, for the benchmark's count of batching.
        self.batch_sizes: list[int] = []
        self._changed = threading.Condition()
        self._work: dict[int, _Work] = {}
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None

    async def run(self, work: Callable[[], Transcript], asker: Asker) -> Transcript:
        """Queue `work` (a blocking model call) as `asker`'s and wait for its transcript."""
        (transcript,) = await self.run_together([(work, asker)])
        return transcript

    async def run_together(
        self, works: Sequence[tuple[Callable[[], Transcript], Asker]]
    ) -> list[Transcript]:
        """Queue several works at once and wait for all: queued in one step, the finals alike
        among them are taken in one batch (a speech worker's collected requests)."""
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[Transcript]] = []
        job_ids: list[int] = []
        with self._changed:
            for work, asker in works:
                job_ids.append(next(self._ids))
                futures.append(loop.create_future())
                self._work[job_ids[-1]] = (work, loop, futures[-1])
                self._queue.submit(
                    job_id=job_ids[-1], stream=asker.stream, final=asker.final, at=self._clock()
                )
            self._start()
            self._changed.notify()
        try:
            return list(await asyncio.gather(*futures))
        finally:
            # Cancelled (or done): a decode nobody waits for must not hold the thread.
            with self._changed:
                for job_id in job_ids:
                    self._queue.cancel(job_id)
                    self._work.pop(job_id, None)

    def promote(self, stream: str) -> None:
        """The stream's turn is decided: what it waits on runs before anyone's speculation."""
        with self._changed:
            self._queue.promote(stream)
            self._changed.notify()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="asr", daemon=True)
            self._thread.start()

    def _serve(self) -> None:
        while True:
            with self._changed:
                job = self._queue.take(at=self._clock())
                while job is None:
                    self._changed.wait()
                    job = self._queue.take(at=self._clock())
                taken = [self._work.pop(job.job_id)]
                if job.final:
                    taken += self._finals_alike(taken[0][0])
            self.batch_sizes.append(len(taken))
            works = [work for work, _, _ in taken]
            try:
                if len(works) > 1 and self._batch is not None:
                    # Only _finals_alike adds to a batch, and only Decodes.
                    outcome: list[Transcript] | Exception = self._batch(works)  # type: ignore[arg-type]
                else:
                    outcome = [works[0]()]
            except Exception as error:
                outcome = error
            for index, (_work, loop, future) in enumerate(taken):
                _settle(loop, future, outcome if isinstance(outcome, Exception) else outcome[index])

    def _finals_alike(self, first: Callable[[], Transcript]) -> list[_Work]:
        """Other finals to decode with `first`, waiting up to collect_s for more while other
        recognitions are queued (calls mid-turn); called holding the lock."""
        if self._batch is None or not isinstance(first, Decode):
            return []

        def alike(job_id: int) -> bool:
            work = self._work[job_id][0]
            return isinstance(work, Decode) and work.prompt_free == first.prompt_free

        more: list[_Work] = []
        deadline = self._clock() + self._collect_s
        while len(more) + 1 < self._batch_max:
            job = self._queue.take_final(accept=alike)
            if job is not None:
                more.append(self._work.pop(job.job_id))
                continue
            left = deadline - self._clock()
            if left <= 0 or not len(self._queue):
                break
            self._changed.wait(timeout=left)
        return more


def _settle(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Transcript],
    outcome: Transcript | Exception,
) -> None:
    def settle() -> None:
        if future.done():
            return  # its asker gave up (cancelled) while the model ran
        if isinstance(outcome, Exception):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    try:
        loop.call_soon_threadsafe(settle)
    except RuntimeError:
        # The asking loop has closed (its call ended with the process): nobody is left to tell.
        logger.debug("a recognition finished after its event loop closed")
