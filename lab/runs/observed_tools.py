"""Calls an agent ran on its own tools, recorded as what they were: it already did them.

A bot that runs its own tools (its own ids, its own data) is judged on what it reported: a
lookup's options are read out of its own result, a commit that its result does not call a
failure executed. The gate still decides each call in guarded runs, so the log says what it
would have allowed; a commit it would have blocked is recorded as executed all the same, and the
evaluator FAILs it: it happened.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from lab.agent_tools.observed import AmbiguousResult
from lab.agent_tools.toolset import LabCall, Toolset
from lab.connectors.interface import ToolCall, ToolResult
from lab.events.chain import digest
from lab.events.types import (
    AgentFaulted,
    Args,
    CommitFailed,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    GateDecision,
    GateRequest,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Operation,
    Outcome,
    Receipt,
)
from lab.policy.gate import GateState
from lab.referee.referee import Referee
from lab.runs.counters import RunCounters

Record = Callable[[EventPayload], Awaitable[Event]]
_FAILED_WORDS = frozenset({"failed", "error", "invalid", "rejected", "unavailable", "denied"})


class ObservedCalls:
    """Records one run's observed calls; `known` is shared with the toolbox (options by id)."""

    def __init__(
        self,
        *,
        record: Record,
        referee: Referee,
        gate: GateState,
        counters: RunCounters,
        guarded: bool,
        toolset: Toolset,
        known: dict[str, Args],
    ) -> None:
        self.record = record
        self.referee = referee
        self.gate = gate
        self.counters = counters
        self.guarded = guarded
        self.toolset = toolset
        self.known = known

    async def lookup(self, call: ToolCall, read: LabCall, result: Any) -> ToolResult:
        revision = self.referee.revision
        decision = await self._decide(
            GateRequest(
                operation=Operation.LOOKUP, action=read.action, revision=revision, args=read.args
            )
        )
        attempt = self.counters.next(f"lookup-{revision}")
        attempt_id = f"lk-{revision}-{attempt}"
        await self.record(
            LookupStarted(
                attempt_id=attempt_id,
                attempt=attempt,
                revision=revision,
                action=read.action,
                query=read.args,
                authorized_by=decision.id if decision else None,
            )
        )
        try:
            results = None if _failure(result) else self.toolset.results_read(call.name, result)
            options = None if _failure(result) else self.toolset.read_options(call.name, result)
        except AmbiguousResult as ambiguous:
            # Fail closed: options read the wrong way would ground (or not) the wrong readback.
            reason = f"{call.name}: {ambiguous}"
            await self.record(
                LookupFailed(attempt_id=attempt_id, failure_kind="error", reason=reason)
            )
            await self.record(AgentFaulted(fault_kind="unread", reason=reason))
            return ToolResult(call.call_id, "failed", {"error": reason}, reason)
        if options is None:
            reason = _failure(result) or "its result listed no options the lab could read"
            await self.record(
                LookupFailed(attempt_id=attempt_id, failure_kind="error", reason=reason)
            )
            return ToolResult(call.call_id, "failed", {"error": reason}, reason)
        for option in options:
            self.known[str(option[self.toolset.shape(read.action).key])] = option
        read_as = {"tool": call.name, **results.model_dump(mode="json")} if results else None
        await self.record(
            LookupSucceeded(attempt_id=attempt_id, options=options, results_read=read_as)
        )
        return ToolResult(call.call_id, "ok", {"options": [dict(o) for o in options]})

    async def commit(self, call: ToolCall, read: LabCall, result: Any) -> ToolResult:
        basis = self.referee.commit_basis(read.action, read.args)
        proposal = basis.proposal
        decision = await self._decide(
            GateRequest(
                operation=Operation.COMMIT,
                action=read.action,
                revision=basis.revision,
                args=read.args,
                proposal_id=proposal.proposal_id if proposal else None,
                confirmation_event_id=basis.confirmation_event_id,
            )
        )
        allowed = decision is not None and _allowed(decision)
        attempt_id = f"cm-{self.counters.next('commit')}"
        # Its own key: the agent ran it, whatever key the gate would have given it.
        key = f"observed-{attempt_id}-{call.call_id[:40]}"
        await self.record(
            CommitStarted(
                attempt_id=attempt_id,
                idempotency_key=key,
                action=read.action,
                args=read.args,
                args_hash=digest(read.args),
                revision=basis.revision,
                proposal_id=proposal.proposal_id if proposal else None,
                confirmation_event_id=basis.confirmation_event_id,
                authorized_by=decision.id if allowed and decision else None,
            )
        )
        if reason := _failure(result):
            await self.record(
                CommitFailed(attempt_id=attempt_id, failure_kind="error", reason=reason)
            )
            return ToolResult(call.call_id, "failed", {"error": reason}, reason)
        receipt = Receipt(
            receipt_id=_receipt_id(result) or attempt_id,
            execution_id=f"observed-{attempt_id}",
            idempotency_key=key,
            adapter=f"observed:{call.name[:48]}",
            action=read.action,
            args=read.args,
        )
        await self.record(CommitSucceeded(attempt_id=attempt_id, receipt=receipt, replayed=False))
        if decision is not None and not allowed:
            reason = _reason(decision)
            return ToolResult(call.call_id, "blocked", {"error": reason}, reason)
        return ToolResult(call.call_id, "ok", {"receipt_id": receipt.receipt_id})

    async def _decide(self, request: GateRequest) -> Event | None:
        return await self.record(self.gate.decide(request)) if self.guarded else None


def _allowed(decision: Event) -> bool:
    payload = decision.payload
    return isinstance(payload, GateDecision) and payload.outcome is not Outcome.BLOCK


def _reason(decision: Event) -> str:
    payload = decision.payload
    return payload.reason if isinstance(payload, GateDecision) else "blocked"


def _failure(result: Any) -> str | None:
    """Why a reported result is a failure (its kind, status or error says so), or None."""
    if result is None:
        return "the agent reported no result"
    if not isinstance(result, dict):
        return None
    error = result.get("error")
    if error:
        return str(error)[:300]
    for key in ("kind", "status", "state"):
        if str(result.get(key, "")).lower() in _FAILED_WORDS:
            return str(result.get("reason") or result.get("message") or result[key])[:300]
    if result.get("ok") is False or result.get("success") is False:
        return str(result.get("reason") or result.get("message") or "it reported a failure")[:300]
    content = result.get("content")
    return _failure(content) if isinstance(content, dict) else None


def _receipt_id(result: Any) -> str | None:
    """An id the agent's own result gave its write (a receipt, a confirmation, a booking)."""
    if not isinstance(result, dict):
        return None
    for key, value in result.items():
        if isinstance(value, str | int) and (key == "id" or key.endswith(("_id", "number"))):
            return str(value)[:64]
        if isinstance(value, dict) and (found := _receipt_id(value)) is not None:
            return found
    return None
