"""A run's tool attempts: lookups and commits routed by action, with faults and timeouts."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings

from lab.agent.dialogue import Lookup
from lab.events.models import Run
from lab.events.types import (
    Action,
    CommitFailed,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    LateResultRejected,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    ProposalMade,
)
from lab.scenarios.contracts import Contract, Fault
from lab.tools.adapters import ADAPTERS, CommitRejected, CommitResult, ToolAdapter
from lab.tools.authorization import Authorization

Record = Callable[[EventPayload], Awaitable[Event]]


def offered_tools(contract: Contract) -> dict[Action, ToolAdapter]:
    """The adapters a scenario offers, by the action each one serves."""
    adapters = [ADAPTERS[name] for name in contract.tools]
    return {adapter.action: adapter for adapter in adapters}


class ToolCalls:
    def __init__(self, *, run: Run, contract: Contract, record: Record, scale: float) -> None:
        self.run = run
        self.record = record
        self.scale = scale
        self.adapters = offered_tools(contract)
        self.default_action = next(iter(self.adapters))
        self.faults: dict[tuple[str, int], Fault] = {
            (fault.operation, fault.attempt): fault for fault in contract.faults
        }
        self.background: set[asyncio.Task[Any]] = set()
        self._counters: dict[str, int] = {}

    async def load(self) -> None:
        """Load each offered tool's sandbox rows for this run."""
        for adapter in self.adapters.values():
            await database_sync_to_async(adapter.load)(self.run)

    def cancel(self) -> None:
        for task in self.background:
            task.cancel()

    def _next(self, counter: str) -> int:
        self._counters[counter] = self._counters.get(counter, 0) + 1
        return self._counters[counter]

    async def lookup(self, step: Lookup, *, attempt: int, authorized_by: str | None) -> None:
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
        fault = self.faults.get(("lookup", self._next("lookup")))
        adapter = self.adapters.get(step.action)
        if adapter is None or (fault is not None and fault.kind == "error"):
            reason = "injected error" if adapter else f"this scenario has no {step.action} tool"
            await self.record(
                LookupFailed(attempt_id=attempt_id, failure_kind="error", reason=reason)
            )
            return
        work = self._call(adapter.lookup, self.run, step.query, fault=fault)
        options = await self._await(
            work,
            attempt_id,
            lambda reason: LookupFailed(
                attempt_id=attempt_id, failure_kind="timeout", reason=reason
            ),
        )
        if options is None:
            return
        await self.record(LookupSucceeded(attempt_id=attempt_id, options=options))

    async def commit(
        self, proposal: ProposalMade, *, confirmation_event_id: str, authorization: Authorization
    ) -> None:
        number = self._next("commit")
        attempt_id = f"cm-{number}"
        await self.record(
            CommitStarted(
                attempt_id=attempt_id,
                idempotency_key=authorization.idempotency_key,
                action=proposal.action,
                args=proposal.args,
                args_hash=proposal.args_hash,
                revision=proposal.revision,
                proposal_id=proposal.proposal_id,
                confirmation_event_id=confirmation_event_id,
                authorized_by=authorization.decision_event_id,
            )
        )
        fault = self.faults.get(("commit", number))
        adapter = self.adapters.get(proposal.action)
        if adapter is None or (fault is not None and fault.kind == "error"):
            reason = "injected error" if adapter else f"this scenario has no {proposal.action} tool"
            await self.record(
                CommitFailed(attempt_id=attempt_id, failure_kind="error", reason=reason)
            )
            return
        work = self._call(adapter.commit, self.run, authorization, proposal.args, fault=fault)
        try:
            result: CommitResult | None = await self._await(
                work,
                attempt_id,
                lambda reason: CommitFailed(
                    attempt_id=attempt_id, failure_kind="timeout", reason=reason
                ),
            )
        except CommitRejected as rejected:
            await self.record(
                CommitFailed(
                    attempt_id=attempt_id, failure_kind=rejected.kind, reason=rejected.reason
                )
            )
            return
        if result is not None:
            await self.record(
                CommitSucceeded(
                    attempt_id=attempt_id, receipt=result.receipt, replayed=result.replayed
                )
            )

    def _call(
        self, function: Callable[..., Any], *args: Any, fault: Fault | None
    ) -> asyncio.Task[Any]:
        async def call() -> Any:
            if fault is not None and fault.kind == "timeout":
                late_ms = settings.LAB_TOOL_TIMEOUT_MS + (fault.late_result_after_ms or 0)
                await asyncio.sleep(late_ms / 1000 * self.scale)
            return await database_sync_to_async(function)(*args)

        return asyncio.ensure_future(call())

    async def _await(
        self,
        work: asyncio.Task[Any],
        attempt_id: str,
        timed_out: Callable[[str], EventPayload],
    ) -> Any | None:
        """The tool's answer, or None after recording that it did not come in time."""
        timeout = settings.LAB_TOOL_TIMEOUT_MS / 1000 * self.scale
        try:
            return await asyncio.wait_for(asyncio.shield(work), timeout)
        except TimeoutError:
            await self.record(timed_out(f"no answer within {settings.LAB_TOOL_TIMEOUT_MS} ms"))
            self._reject_late(work, attempt_id)
            return None

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
