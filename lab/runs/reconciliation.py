"""Reconciliation: commit attempts whose outcome the log never recorded, settled from the sandbox,
and utterances whose grade it never recorded, graded late (lab.runs.grading.grades_recover).

A process can stop between tool.commit.started and its outcome (kill -9 in the write window), and
a commit can outlive its timeout. Either way the log then records what the sandbox holds for the
attempt's idempotency key: the receipt, or "did not execute" (and the key is voided for good).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from channels.db import database_sync_to_async

from lab.events import store
from lab.events.models import Run
from lab.events.types import (
    CommitFailed,
    CommitReconciled,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    ReconcileTrigger,
)
from lab.runs.grading import grades_recover
from lab.runs.log import RunLog
from lab.tools.adapters import execution_settle

Record = Callable[[EventPayload], Awaitable[Event]]


def open_commits(events: Iterable[Event]) -> list[CommitStarted]:
    """Commit attempts started with no definite outcome recorded (a timeout is not definite)."""
    started: dict[str, CommitStarted] = {}
    for event in events:
        match event.payload:
            case CommitStarted() as attempt:
                started[attempt.attempt_id] = attempt
            case CommitSucceeded(attempt_id=attempt_id) | CommitReconciled(attempt_id=attempt_id):
                started.pop(attempt_id, None)
            case CommitFailed(attempt_id=attempt_id, failure_kind=kind) if kind != "timeout":
                started.pop(attempt_id, None)
    return list(started.values())


def _produced(events: Iterable[Event]) -> set[str]:
    """Execution ids the log already records as executed (not replayed)."""
    produced: set[str] = set()
    for event in events:
        match event.payload:
            case CommitSucceeded(receipt=receipt, replayed=False):
                produced.add(receipt.execution_id)
            case CommitReconciled(receipt=receipt, replayed=False) if receipt is not None:
                produced.add(receipt.execution_id)
    return produced


async def settle(
    run: Run, started: CommitStarted, events: Iterable[Event], *, trigger: ReconcileTrigger
) -> CommitReconciled:
    """What the sandbox holds for one attempt, as the event that records it."""
    key = started.idempotency_key
    receipt = await database_sync_to_async(execution_settle)(
        run=run, idempotency_key=key, args_hash=started.args_hash
    )
    if receipt is None:
        evidence = (
            f"The sandbox holds no execution of key {key[:12]}… with these arguments; "
            "the key is void, so it never executes."
        )
    else:
        evidence = (
            f"The sandbox holds execution {receipt.execution_id} (receipt {receipt.receipt_id}) "
            f"for key {key[:12]}…."
        )
    return CommitReconciled(
        attempt_id=started.attempt_id,
        idempotency_key=key,
        receipt=receipt,
        replayed=receipt is not None and receipt.execution_id in _produced(events),
        trigger=trigger,
        evidence=evidence,
    )


async def reconcile(run: Run, events: list[Event], record: Record) -> int:
    """Record a reconciliation for every open commit attempt of a reopened run (returned), after
    the grades a crash left unrecorded (lab.runs.grading.grades_recover)."""
    await grades_recover(run, events, record)
    attempts = open_commits(events)
    for started in attempts:
        await record(await settle(run, started, events, trigger="recovery"))
    return len(attempts)


async def reconcile_stored(run: Run) -> int:
    """Reconcile a run that no session holds (the start-up sweep)."""
    events = await database_sync_to_async(store.run_events)(run)
    if any(event.type == "run.ended" for event in events):
        return 0
    log = RunLog(run, events)
    return await reconcile(run, log.events, log.append)


async def reconcile_active_runs() -> int:
    """The start-up sweep: reconcile every active run's open commits; returns how many."""
    runs = await database_sync_to_async(list)(Run.objects.filter(status=Run.Status.ACTIVE))
    total = 0
    for run in runs:
        total += await reconcile_stored(run)
    return total
