"""A run's tool attempts: lookups and commits routed by action, with faults and timeouts."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from lab.events.models import Run
from lab.events.types import (
    Action,
    Args,
    CallerUnderstood,
    CommitFailed,
    CommitStarted,
    CommitSucceeded,
    CommitUncertain,
    Event,
    EventPayload,
    LateResultRejected,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    ProposalMade,
    ReconcileTrigger,
)
from lab.runs.counters import RunCounters
from lab.runs.log import RunClosed
from lab.runs.reconciliation import settle
from lab.scenarios.contracts import Contract, Fault
from lab.scripted.steps import Lookup
from lab.tools.adapters import ADAPTERS, CommitRejected, CommitResult, ToolAdapter
from lab.tools.authorization import Authorization, CommitRequest

Record = Callable[[EventPayload], Awaitable[Event]]
WaitFor = Callable[[int, Callable[[Event], bool]], Awaitable[Event]]
# Conversation seconds a slow write waits, at most, for the caller's line cued into it.
HOLD_S = 30.0


def _understood(event: Event) -> bool:
    return isinstance(event.payload, CallerUnderstood)


@dataclass(frozen=True)
class Commitment:
    """What one commit attempt writes, and the revision and proposal it claims to rest on."""

    action: Action
    revision: int
    proposal_id: str | None
    args: Args
    args_hash: str


def offered_tools(contract: Contract) -> dict[Action, ToolAdapter]:
    """The adapters a scenario offers, by the action each one serves."""
    adapters = [ADAPTERS[name] for name in contract.tools]
    return {adapter.action: adapter for adapter in adapters}


class ToolCalls:
    def __init__(
        self,
        *,
        run: Run,
        contract: Contract,
        record: Record,
        events: Callable[[], list[Event]],
        scale: float,
        counters: RunCounters,
        wait_for: WaitFor | None = None,
    ) -> None:
        self.run = run
        self.wait_for = wait_for
        # A scenario that cues a caller line into a write holds its slow write until that line
        # is understood, so the caller is heard mid-write however long recognition takes.
        self.hold_for_caller = any(line.after == "commit_started" for line in contract.caller)
        self.record = record
        self.events = events
        self.scale = scale
        self.adapters = offered_tools(contract)
        self.default_action = next(iter(self.adapters))
        self.faults: dict[tuple[str, int], Fault] = {
            (fault.operation, fault.attempt): fault for fault in contract.faults
        }
        self.background: set[asyncio.Task[Any]] = set()
        self._open: dict[str, tuple[CommitStarted, asyncio.Task[Any]]] = {}
        self._settling: dict[str, asyncio.Task[None]] = {}
        self.counters = counters
        # Commit attempts awaiting their answer now: a caller heard meanwhile barges into a write.
        self.writing = 0

    async def load(self) -> None:
        """Load each offered tool's sandbox rows for this run."""
        for adapter in self.adapters.values():
            await database_sync_to_async(adapter.load)(self.run)

    def cancel(self) -> None:
        for task in self.background:
            task.cancel()

    async def lookup(self, step: Lookup, *, attempt: int, authorized_by: str | None) -> str:
        """Run one lookup attempt and record its outcome; returns the attempt's id."""
        attempt_id = f"lk-{step.revision}-{attempt}"
        await self.record(
            LookupStarted(
                attempt_id=attempt_id,
                attempt=attempt,
                revision=step.revision,
                action=step.action,
                query=step.query,
                authorized_by=authorized_by,
            )
        )
        fault = self.faults.get(("lookup", self.counters.next("lookup")))
        adapter = self.adapters.get(step.action)
        if adapter is None or (fault is not None and fault.kind == "error"):
            reason = "injected error" if adapter else f"this scenario has no {step.action} tool"
            await self.record(
                LookupFailed(attempt_id=attempt_id, failure_kind="error", reason=reason)
            )
            return attempt_id
        work = self._call(adapter.lookup, self.run, step.query, fault=fault)
        options = await self._await(
            work,
            attempt_id,
            fault,
            lambda reason: LookupFailed(
                attempt_id=attempt_id, failure_kind="timeout", reason=reason
            ),
        )
        if options is not None:
            await self.record(LookupSucceeded(attempt_id=attempt_id, options=options))
        return attempt_id

    async def commit(
        self, proposal: ProposalMade, *, confirmation_event_id: str, authorization: Authorization
    ) -> str:
        """Commit what a proposal offered; returns the attempt's id."""
        return await self.commit_args(
            Commitment(
                action=proposal.action,
                revision=proposal.revision,
                proposal_id=proposal.proposal_id,
                args=proposal.args,
                args_hash=proposal.args_hash,
            ),
            confirmation_event_id=confirmation_event_id,
            authorization=authorization,
        )

    async def commit_args(
        self,
        commitment: Commitment,
        *,
        confirmation_event_id: str | None,
        authorization: Authorization,
    ) -> str:
        """One commit attempt, recorded from start to outcome; returns the attempt's id."""
        self.writing += 1
        try:
            return await self._commit_args(
                commitment, confirmation_event_id=confirmation_event_id, authorization=authorization
            )
        finally:
            self.writing -= 1

    async def _commit_args(
        self,
        commitment: Commitment,
        *,
        confirmation_event_id: str | None,
        authorization: Authorization,
    ) -> str:
        number = self.counters.next("commit")
        attempt_id = f"cm-{number}"
        started = CommitStarted(
            attempt_id=attempt_id,
            idempotency_key=authorization.idempotency_key,
            action=commitment.action,
            args=commitment.args,
            args_hash=commitment.args_hash,
            revision=commitment.revision,
            proposal_id=commitment.proposal_id,
            confirmation_event_id=confirmation_event_id,
            authorized_by=authorization.decision_event_id,
        )
        await self.record(started)
        fault = self.faults.get(("commit", number))
        adapter = self.adapters.get(commitment.action)
        if adapter is None or (fault is not None and fault.kind == "error"):
            reason = (
                "injected error" if adapter else f"this scenario has no {commitment.action} tool"
            )
            await self.record(
                CommitFailed(attempt_id=attempt_id, failure_kind="error", reason=reason)
            )
            return attempt_id
        request = CommitRequest(
            action=commitment.action,
            revision=commitment.revision,
            proposal_id=commitment.proposal_id,
            args=commitment.args,
            idempotency_key=authorization.idempotency_key,
        )
        work = self._call(adapter.commit, self.run, authorization, request, fault=fault)
        # Until its outcome is recorded, the write is open: ending the run settles it first.
        self._open[attempt_id] = (started, work)
        if fault is not None and fault.kind == "lost_answer":
            await self._lose_answer(attempt_id, work)
            return attempt_id
        timeout = self._timeout_s(fault)
        try:
            result: CommitResult = await asyncio.wait_for(asyncio.shield(work), timeout)
        except TimeoutError:
            # A write cannot be taken back: its outcome stays open until the write answers.
            await self.record(
                CommitUncertain(
                    attempt_id=attempt_id,
                    reason=f"no answer within {settings.LAB_TOOL_TIMEOUT_MS} ms",
                )
            )
            await self._settle(attempt_id, trigger="timeout")
            return attempt_id
        except CommitRejected as rejected:
            del self._open[attempt_id]
            await self.record(
                CommitFailed(
                    attempt_id=attempt_id, failure_kind=rejected.kind, reason=rejected.reason
                )
            )
            return attempt_id
        except Exception:
            await self._settle(attempt_id, trigger="error")
            return attempt_id
        del self._open[attempt_id]
        await self.record(
            CommitSucceeded(attempt_id=attempt_id, receipt=result.receipt, replayed=result.replayed)
        )
        return attempt_id

    async def _lose_answer(self, attempt_id: str, work: asyncio.Task[Any]) -> None:
        """The write runs to its end, and its answer never reaches the agent: the attempt may
        have run, as far as the agent can tell, and stays open until the run settles it."""
        with contextlib.suppress(Exception):
            await asyncio.shield(work)
        await self.record(
            CommitFailed(
                attempt_id=attempt_id,
                failure_kind="timeout",
                reason="the connection dropped before the answer came back; it may have run",
            )
        )

    async def settle_open(self) -> None:
        """Wait for every write still open and record what the sandbox then holds."""
        while self._open:
            await self._settle(next(iter(self._open)), trigger="run_ending")

    async def _settle(self, attempt_id: str, *, trigger: ReconcileTrigger) -> None:
        """Once its write has answered, record one open attempt's outcome from the sandbox."""
        task = self._settling.get(attempt_id)
        if task is None:
            task = asyncio.ensure_future(self._reconcile(attempt_id, trigger))
            self._settling[attempt_id] = task
        await asyncio.shield(task)

    async def _reconcile(self, attempt_id: str, trigger: ReconcileTrigger) -> None:
        started, work = self._open[attempt_id]
        with contextlib.suppress(Exception):
            await work
        try:
            await self.record(await settle(self.run, started, self.events(), trigger=trigger))
        finally:
            self._open.pop(attempt_id, None)

    def _call(
        self, function: Callable[..., Any], *args: Any, fault: Fault | None
    ) -> asyncio.Task[Any]:
        since = len(self.events())

        async def call() -> Any:
            if fault is not None and fault.kind == "timeout":
                late_ms = settings.LAB_TOOL_TIMEOUT_MS + (fault.late_result_after_ms or 0)
                await asyncio.sleep(late_ms / 1000 * self.scale)
            elif fault is not None and fault.kind == "slow":
                await asyncio.sleep((fault.late_result_after_ms or 0) / 1000 * self.scale)
                await self._caller_heard(since)
            return await database_sync_to_async(function)(*args)

        return asyncio.ensure_future(call())

    async def _await(
        self,
        work: asyncio.Task[Any],
        attempt_id: str,
        fault: Fault | None,
        timed_out: Callable[[str], EventPayload],
    ) -> Any | None:
        """The tool's answer, or None after recording that it did not come in time."""
        timeout = self._timeout_s(fault)
        try:
            return await asyncio.wait_for(asyncio.shield(work), timeout)
        except TimeoutError:
            await self.record(timed_out(f"no answer within {settings.LAB_TOOL_TIMEOUT_MS} ms"))
            self._reject_late(work, attempt_id)
            return None

    async def _caller_heard(self, since: int) -> None:
        """Hold a slow write until the caller's line into it is understood (at most HOLD_S)."""
        if not self.hold_for_caller or self.wait_for is None:
            return
        with contextlib.suppress(TimeoutError, RunClosed):
            async with asyncio.timeout(HOLD_S * self.scale):
                await self.wait_for(since, _understood)

    def _timeout_s(self, fault: Fault | None) -> float:
        """How long the lab waits for an attempt: a slow one by design is waited for, its delay
        (and any hold for the caller) on top of the usual timeout, so it answers late."""
        slow_ms = 0.0
        if fault is not None and fault.kind == "slow":
            slow_ms = (fault.late_result_after_ms or 0) + (
                HOLD_S * 1000 if self.hold_for_caller else 0
            )
        return (settings.LAB_TOOL_TIMEOUT_MS + slow_ms) / 1000 * self.scale

    def _reject_late(self, work: asyncio.Task[Any], attempt_id: str) -> None:
        """A timed-out attempt is terminal: whatever it returns later is recorded as rejected."""

        async def watch() -> None:
            with contextlib.suppress(Exception):
                await work
                await self.record(
                    LateResultRejected(
                        attempt_id=attempt_id, reason="the attempt had already timed out"
                    )
                )

        task = asyncio.ensure_future(watch())
        self.background.add(task)
        task.add_done_callback(self.background.discard)
