"""The run's sandboxed tools as an outside agent calls them: parsed, gated, executed, recorded.

Each call becomes the events the scripted agent's steps make (gate decisions, tool lookups and
commits), so the evaluator, the panel and the report read an outside agent's run unchanged. A
malformed call is answered `invalid` and recorded; it never raises.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from lab.agent_tools.toolset import Refused, Toolset
from lab.connectors.interface import ToolCall, ToolResult
from lab.connectors.tool_specs import TOOL_SPECS, ToolSpec, lab_tools_file, offered_specs
from lab.events.chain import digest
from lab.events.models import Run
from lab.events.types import (
    Action,
    Args,
    CommitFailed,
    CommitReconciled,
    CommitSucceeded,
    CommitUncertain,
    Event,
    EventPayload,
    GateDecision,
    GateRequest,
    LookupFailed,
    LookupSucceeded,
    Mode,
    Operation,
    Outcome,
    ToolCallInvalid,
    ToolCallObserved,
)
from lab.policy.gate import GateState
from lab.referee.referee import Referee
from lab.runs.counters import RunCounters
from lab.runs.observed_tools import ObservedCalls
from lab.runs.tools import Commitment, ToolCalls
from lab.scripted.steps import Lookup
from lab.tools.authorization import Authorization

Record = Callable[[EventPayload], Awaitable[Event]]
_REASON_CHARS = 500
_OBSERVED_CHARS = 4000
_OUTCOMES = (
    LookupSucceeded,
    LookupFailed,
    CommitSucceeded,
    CommitFailed,
    CommitUncertain,
    CommitReconciled,
)


class GatedToolBox:
    """ToolBox for one run: the gate decides first in guarded runs; as-is runs go straight on."""

    def __init__(
        self,
        *,
        run: Run,
        record: Record,
        events: Callable[[], list[Event]],
        tools: ToolCalls,
        gate: GateState,
        referee: Referee,
        counters: RunCounters,
        toolset: Toolset | None = None,
        settled: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """toolset: the agent's own tools (its tools file); None offers the lab's own. settled:
        awaited before each call, until the log holds what the caller has said on a live line."""
        self.run = run
        self._settled = settled
        self.guarded = run.mode == Mode.GUARDED
        self.record = record
        self.events = events
        self.tools = tools
        self.gate = gate
        self.referee = referee
        self.counters = counters
        # What a connector offers the agent (as functions, MCP tools): this scenario's tools only.
        self.offered: list[ToolSpec] = offered_specs(frozenset(tools.adapters))
        self.toolset = toolset
        # The options lookups listed so far (served or observed), by the id that names each.
        self.known: dict[str, Args] = {}
        self.observed = ObservedCalls(
            record=record,
            referee=referee,
            gate=gate,
            counters=counters,
            guarded=self.guarded,
            toolset=toolset or Toolset(lab_tools_file(), referee.week),
            known=self.known,
        )
        # One call at a time, whatever path it came by (a connector, MCP, an observed call): the
        # gate decides each on the state the one before it left, or two identical commits in
        # flight would both be allowed.
        self._turn = asyncio.Lock()
        # What call() answered, by name and arguments, oldest first: an agent whose own tools
        # call the run's sandbox (a pipecat bot pointed at it) reports each call on its wire too.
        self._served: dict[str, list[ToolResult]] = {}

    async def call(self, call: ToolCall) -> ToolResult:
        if self._settled is not None:
            await self._settled()
        async with self._turn:
            result = await self._run(call, gated=self.guarded)
            self._served.setdefault(_served_key(call), []).append(result)
            return result

    async def observe(self, call: ToolCall, result: dict[str, Any] | None) -> ToolResult:
        """A call the agent already ran on its own tools: recorded as observed, then put to the
        gate (guarded runs; it decides, it cannot stop what already ran) and to the sandbox, so
        the decision, lookup and commit events the evaluator judges exist as for any call. A
        `blocked` answer means the agent did what the gate forbids."""
        async with self._turn:
            served = self._served.get(_served_key(call))
            if served:
                # Served through the sandbox a moment ago, and recorded then: not run twice.
                return served.pop(0)
            return await self._observe(call, result)

    async def _observe(self, call: ToolCall, result: dict[str, Any] | None) -> ToolResult:
        await self.record(
            ToolCallObserved(
                call_id=call.call_id[:64],
                name=call.name[:64],
                arguments=_bounded(call.arguments),
                result=_bounded(result) if result is not None else None,
            )
        )
        try:
            read = self.observed.toolset.read(call.name, call.arguments, self.known)
        except Refused as refused:
            return await self._invalid(call, str(refused))
        if read.operation is Operation.LOOKUP:
            return await self.observed.lookup(call, read, result)
        return await self.observed.commit(call, read, result)

    async def _run(self, call: ToolCall, *, gated: bool) -> ToolResult:
        if self.toolset is not None:
            return await self._run_own(call, self.toolset, gated)
        spec = TOOL_SPECS.get(call.name)
        if spec is None or spec not in self.offered:
            offered = ", ".join(s.name for s in self.offered)
            return await self._invalid(
                call, f"no tool {call.name!r} on this call; offered: {offered}"
            )
        try:
            parsed = spec.args_model.model_validate(call.arguments)
        except ValidationError as error:
            return await self._invalid(call, _validation_message(error))
        args: Args = parsed.model_dump(exclude_none=True)
        if spec.operation is Operation.LOOKUP:
            return await self._lookup(call, spec.action, args, gated)
        return await self._commit(call, spec.action, args, gated)

    async def _run_own(self, call: ToolCall, toolset: Toolset, gated: bool) -> ToolResult:
        """A call to the agent's own tools: read into the lab's terms, answered in its shape."""
        try:
            read = toolset.read(call.name, call.arguments, self.known)
        except Refused as refused:
            result = await self._invalid(call, str(refused))
            return replace(result, wire={"ok": False, "error": result.reason})
        if read.operation is Operation.COMMIT:
            result = await self._commit(call, read.action, read.args, gated)
            return replace(result, wire=_own_answer(result))
        result = await self._lookup(call, read.action, read.args, gated)
        if result.kind != "ok":
            return replace(result, wire=_own_answer(result))
        options: list[Args] = result.content["options"]
        for option in options:
            self.known[str(option[toolset.shape(read.action).key])] = option
        return replace(result, wire=toolset.answer_lookup(call.name, options))

    async def _invalid(self, call: ToolCall, reason: str) -> ToolResult:
        reason = reason[:_REASON_CHARS]
        await self.record(
            ToolCallInvalid(call_id=call.call_id[:64], name=call.name[:64], reason=reason)
        )
        return ToolResult(call_id=call.call_id, kind="invalid", reason=reason)

    async def _decide(self, request: GateRequest, gated: bool) -> Event | None:
        return await self.record(self.gate.decide(request)) if gated else None

    async def _lookup(self, call: ToolCall, action: Action, args: Args, gated: bool) -> ToolResult:
        revision = self.referee.revision
        decision = await self._decide(
            GateRequest(operation=Operation.LOOKUP, action=action, revision=revision, args=args),
            gated,
        )
        if (blocked := _blocked(call, decision)) is not None:
            return blocked
        attempt = self.counters.next(f"lookup-{revision}")
        attempt_id = await self.tools.lookup(
            Lookup(revision, action, args),
            attempt=attempt,
            authorized_by=decision.id if decision else None,
        )
        match self._outcome(attempt_id):
            case LookupSucceeded(options=options):
                return ToolResult(call.call_id, "ok", {"options": [dict(o) for o in options]})
            case LookupFailed(reason=reason):
                return ToolResult(call.call_id, "failed", {"error": reason}, reason)
        return ToolResult(call.call_id, "failed", {"error": "no answer"}, "no answer")

    async def _commit(self, call: ToolCall, action: Action, args: Args, gated: bool) -> ToolResult:
        basis = self.referee.commit_basis(action, args)
        proposal = basis.proposal
        decision = await self._decide(
            GateRequest(
                operation=Operation.COMMIT,
                action=action,
                revision=basis.revision,
                args=args,
                proposal_id=proposal.proposal_id if proposal else None,
                confirmation_event_id=basis.confirmation_event_id,
            ),
            gated,
        )
        if (blocked := _blocked(call, decision)) is not None:
            return blocked
        authorization = (
            Authorization.from_decision(decision)
            if decision
            # As-is: nothing deduplicates, each call is its own attempt, judged afterwards.
            else Authorization.unguarded(f"unguarded-{self.run.id}-{len(self.events()) + 1}")
        )
        attempt_id = await self.tools.commit_args(
            Commitment(
                action=action,
                revision=basis.revision,
                proposal_id=proposal.proposal_id if proposal else None,
                args=args,
                args_hash=digest(args),
            ),
            confirmation_event_id=basis.confirmation_event_id,
            authorization=authorization,
        )
        return _commit_result(call, self._outcome(attempt_id))

    def _outcome(self, attempt_id: str) -> EventPayload | None:
        """The latest recorded outcome of one attempt."""
        for event in reversed(self.events()):
            payload = event.payload
            if isinstance(payload, _OUTCOMES) and payload.attempt_id == attempt_id:
                return payload
        return None


def _blocked(call: ToolCall, decision: Event | None) -> ToolResult | None:
    if decision is None or not isinstance(decision.payload, GateDecision):
        return None
    if decision.payload.outcome is not Outcome.BLOCK:
        return None
    reason = decision.payload.reason
    return ToolResult(call.call_id, "blocked", {"error": reason}, reason)


def _commit_result(call: ToolCall, outcome: EventPayload | None) -> ToolResult:
    match outcome:
        case (
            CommitSucceeded(receipt=receipt, replayed=replayed)
            | CommitReconciled(receipt=receipt, replayed=replayed)
        ) if receipt is not None:
            content: dict[str, Any] = {"receipt_id": receipt.receipt_id, "replayed": replayed}
            return ToolResult(call.call_id, "ok", content)
        case CommitFailed(reason=reason):
            return ToolResult(call.call_id, "failed", {"error": reason}, reason)
        case CommitReconciled():
            reason = "the write did not go through"
            return ToolResult(call.call_id, "failed", {"error": reason}, reason)
    reason = "the write's outcome is not known"
    return ToolResult(call.call_id, "failed", {"error": reason}, reason)


def _own_answer(result: ToolResult) -> dict[str, Any]:
    """A write's outcome, or any refusal, as an agent with its own tools reads it."""
    if result.kind == "ok":
        return {"ok": True, **result.content}
    return {"ok": False, "error": result.reason}


def _served_key(call: ToolCall) -> str:
    return json.dumps([call.name, call.arguments], sort_keys=True, default=str)


def _bounded(value: dict[str, Any]) -> dict[str, Any]:
    """A reported payload as the log keeps it: JSON values only, and not an agent's runaway text."""
    text = json.dumps(value, default=str)
    if len(text) > _OBSERVED_CHARS:
        return {"truncated": text[:_OBSERVED_CHARS]}
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _validation_message(error: ValidationError) -> str:
    """The validation errors in one line, without echoing the (possibly huge) input back."""
    parts = []
    for item in error.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        parts.append(f"{where}: {item['msg']}")
    return "invalid arguments: " + "; ".join(parts)
