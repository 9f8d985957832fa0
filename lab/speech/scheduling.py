"""Which recognition the recognition thread runs next: finals first, speculation shed under load.

Pure: no clock, no threads; times are plain seconds supplied by the caller. A *final* decode is
one a decided turn waits on; a *speculative* one starts in a pause the caller may yet speak
through. Nothing is ever dropped: speculation that waited too long is deferred behind fresh
work, speculation a newer decode of its stream supersedes is parked, and either runs as a final
once its turn is decided (promoted); its owner cancels it if the caller speaks on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum


class JobState(Enum):
    QUEUED = "queued"
    # Shed under load: it runs only when nothing else waits (or once promoted).
    DEFERRED = "deferred"
    # Superseded: it runs only once its stream is promoted.
    PARKED = "parked"


@dataclass
class Job:
    job_id: int
    stream: str
    final: bool
    submitted_at: float
    # Finals run in the order they became final; speculation in the order it was submitted.
    order: int
    state: JobState = JobState.QUEUED
    shed_because: str | None = None


class RecognitionQueue:
    """The waiting recognitions of one recognition thread (the running one is not here)."""

    def __init__(self, *, speculative_ttl_s: float) -> None:
        if speculative_ttl_s <= 0:
            raise ValueError("speculative_ttl_s must be positive")
        # Speculation that waited this long would land after the fallback decided the turn.
        self.speculative_ttl_s = speculative_ttl_s
        self._jobs: dict[int, Job] = {}
        self._order = 0

    def __len__(self) -> int:
        return len(self._jobs)

    def job(self, job_id: int) -> Job | None:
        return self._jobs.get(job_id)

    def submit(self, *, job_id: int, stream: str, final: bool, at: float) -> Job:
        """Queue one recognition; it supersedes the stream's older queued speculation."""
        if job_id in self._jobs:
            raise ValueError(f"recognition {job_id} is already queued")
        for older in self._of(stream):
            if not older.final and older.state is JobState.QUEUED:
                # Newer audio of the same stream covers what the older decode would have heard.
                self._shed(older, JobState.PARKED, "superseded by a newer decode of its stream")
        job = Job(job_id, stream, final, at, self._next_order())
        self._jobs[job_id] = job
        return job

    def promote(self, stream: str) -> list[Job]:
        """The stream's turn is decided: its waiting recognitions become final (parked ones too)."""
        promoted = [job for job in self._of(stream) if not job.final]
        for job in sorted(promoted, key=lambda job: job.order):
            job.final, job.state, job.shed_because = True, JobState.QUEUED, None
            job.order = self._next_order()
        return promoted

    def cancel(self, job_id: int) -> bool:
        """Forget a recognition its owner no longer wants; False if it was not waiting here."""
        return self._jobs.pop(job_id, None) is not None

    def take(self, *, at: float) -> Job | None:
        """The next recognition to run, removed from the queue; None while only parked ones wait."""
        for job in self._jobs.values():
            stale = at - job.submitted_at > self.speculative_ttl_s
            if not job.final and job.state is JobState.QUEUED and stale:
                self._shed(job, JobState.DEFERRED, "waited past its use as speculation")
        rank = {JobState.QUEUED: 0, JobState.DEFERRED: 1}
        runnable = [job for job in self._jobs.values() if job.state in rank]
        if not runnable:
            return None
        chosen = min(runnable, key=lambda job: (not job.final, rank[job.state], job.order))
        del self._jobs[chosen.job_id]
        return chosen

    def take_final(self, *, accept: Callable[[int], bool]) -> Job | None:
        """The earliest final whose id `accept`s, removed from the queue, to join a batch."""
        finals = [job for job in self._jobs.values() if job.final and accept(job.job_id)]
        if not finals:
            return None
        chosen = min(finals, key=lambda job: job.order)
        del self._jobs[chosen.job_id]
        return chosen

    def _of(self, stream: str) -> list[Job]:
        return [job for job in self._jobs.values() if job.stream == stream]

    def _shed(self, job: Job, state: JobState, reason: str) -> None:
        job.state, job.shed_because = state, reason

    def _next_order(self) -> int:
        self._order += 1
        return self._order
