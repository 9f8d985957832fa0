"""The lab's scripted agent rebuilt from a Chat Completions history, to answer its next message.

Pure: no I/O, no clock. Each request replays the conversation from the start, so the server
keeps no state: user messages are caller turns, the agent's own tool calls and their tool
messages are lookup results and commit receipts. The agent keeps a gate of its own (the lab's
pure gate) in front of what it asks for; a `Habit` (habits.py) takes that guard off one place.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lab.connectors.chat_wire import PENDING, read_knowledge, read_late_result
from lab.connectors.tool_specs import tool_name
from lab.events.chain import EventChain
from lab.events.types import (
    Action,
    AgentInterrupted,
    AgentUtterance,
    Args,
    CallerUtterance,
    Channel,
    CommitFailed,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    GateRequest,
    IntentRevised,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Mode,
    Operation,
    Outcome,
    Receipt,
    RetrievalDone,
    RunStarted,
)
from lab.language.days import Week
from lab.policy.gate import GateState
from lab.reference_agents.habits import Habit
from lab.reference_agents.messages import (
    Reply,
    WireCall,
    options_of,
    receipt_of,
    text_of,
    tool_args,
    tool_body,
)
from lab.retrieval.window import RetrievedChunk
from lab.scripted.answers import Retrieve
from lab.scripted.dialogue import ScriptedAgent
from lab.scripted.steps import Commit, Lookup, Propose, Revise, Say, Step

_AT = datetime(2025, 3, 9, tzinfo=UTC)  # events need a time; nothing here reads it


@dataclass
class _Waiting:
    """A tool call sent over the wire whose tool message has not come yet."""

    call: WireCall
    step: Lookup | Commit
    key: str | None = None
    decision_id: str | None = None


class Replay:
    """One conversation replayed: feed it the history's messages, then read `reply()`."""

    def __init__(
        self,
        *,
        tools: frozenset[Action],
        week: Week,
        habit: Habit | None = None,
    ) -> None:
        self.habit = habit
        # The knowledge the lab retrieved for the next caller turn; the agent has no other.
        self.knowledge: tuple[RetrievedChunk, ...] = ()
        self.chain = EventChain()
        self.gate = GateState()
        self.agent = ScriptedAgent(naive=False, tools=tools, week=week)
        self.steps: deque[Step] = deque()
        self.counters: dict[str, int] = {}
        self.receipts: dict[str, Receipt] = {}  # by the proposal each one carried out
        self.said: list[tuple[str, str]] = []  # (event id, text) since the last assistant message
        self.cuts: list[tuple[str, str]] = []  # (utterance id, heard) for the next caller turn
        self.waiting: _Waiting | None = None
        # Writes the history answered as still running, by call id, with their attempt ids.
        self.running: dict[str, tuple[_Waiting, str]] = {}
        self.record(
            RunStarted(
                run_id="reference",
                scenario_id="reference",
                scenario_version=1,
                contract_hash="0" * 64,
                mode=Mode.GUARDED,
                channel=Channel.TYPED,
                evaluator_version="reference",
                gate_version="reference",
                agent_version="reference",
            )
        )
        self.steps.extend(self.agent.greet())
        self.drain()

    def feed(self, message: dict[str, Any]) -> None:
        match message.get("role"):
            case "user":
                self.hear(text_of(message.get("content")))
            case "assistant":
                self.delivered(text_of(message.get("content")))
            case "tool":
                self.answered(text_of(message.get("content")))
            case "system":
                content = text_of(message.get("content"))
                if (late := read_late_result(content)) is not None:
                    self.came_back(*late)
                found = read_knowledge(content)
                self.knowledge = found if found is not None else self.knowledge

    def reply(self) -> Reply:
        calls = [self.waiting.call] if self.waiting else []
        return Reply(content=" ".join(text for _, text in self.said), calls=calls)

    # -- the history ----------------------------------------------------------------------------

    def hear(self, text: str) -> None:
        # A reply the history never carried (a greeting nobody asked for) was not heard.
        self.said, self.waiting = [], None
        said = self.record(CallerUtterance(text=text, source="typed"))
        for utterance_id, heard in self.cuts:
            self.record(
                AgentInterrupted(
                    utterance_event_id=utterance_id,
                    cause_event_id=said.id,
                    heard_ms=0,
                    heard_text=heard,
                )
            )
        self.cuts = []
        self.record(self.agent.understand(text).event(said.id))
        self.drain()
        self.knowledge = ()

    def came_back(self, call_id: str, content: str) -> None:
        """The result of a write the history answered as still running, once it came."""
        running = self.running.pop(call_id, None)
        if running is None:
            return
        waiting, attempt_id = running
        body = tool_body(content)
        proposal = waiting.step.proposal if isinstance(waiting.step, Commit) else None
        if body.get("kind") != "ok" or proposal is None:
            reason = str(body.get("reason") or body.get("kind") or "the tool refused")
            self.record(CommitFailed(attempt_id=attempt_id, failure_kind="error", reason=reason))
        else:
            key = waiting.key or waiting.call.call_id
            receipt, replayed = receipt_of(body, waiting.call, key, proposal)
            self.receipts.setdefault(proposal.proposal_id, receipt)
            self.record(CommitSucceeded(attempt_id=attempt_id, receipt=receipt, replayed=replayed))
        self.drain()

    def delivered(self, content: str) -> None:
        """The assistant message as the history keeps it: a shorter text means the caller cut in."""
        position = 0
        for utterance_id, text in self.said:
            found = content.find(text, position)
            if found >= 0:
                position = found + len(text)
                continue
            self.cuts.append((utterance_id, content[position:].strip()))
            position = len(content)
        self.said = []

    def answered(self, content: str) -> None:
        waiting, self.waiting = self.waiting, None
        if waiting is None:
            return
        body = tool_body(content)
        match waiting.step:
            case Commit() as commit if body.get("kind") == PENDING["kind"]:
                # Still running while the caller speaks: started, its result to come.
                attempt_id = self._record_commit(commit, waiting.key or "", None, None, False)
                self.running[waiting.call.call_id] = (waiting, attempt_id)
            case Lookup() as lookup:
                self._looked_up(lookup, waiting.decision_id, body)
            case Commit() as commit:
                self._committed(commit, waiting, body)
        self.drain()

    # -- the agent's steps ----------------------------------------------------------------------

    def record(self, payload: EventPayload) -> Event:
        event = self.chain.append(payload, at=_AT)
        self.gate.apply(event)
        for reaction in self.gate.reactions(event):
            self.record(reaction)
        # A habit sees the event before the agent does, and may take the agent's answer's place.
        instead = self.habit.react(self, event) if self.habit else None
        steps = self.agent.observe(event)
        self.steps.extend(steps if instead is None else instead)
        return event

    def next(self, name: str) -> int:
        self.counters[name] = self.counters.get(name, 0) + 1
        return self.counters[name]

    def drain(self) -> None:
        while self.steps and self.waiting is None:
            step = self.steps.popleft()
            if self.habit is not None:
                step = self.habit.rewrite(self, step)
            match step:
                case Say():
                    self._say(step)
                case Retrieve():
                    self._retrieve(step)
                case Revise():
                    self.record(
                        IntentRevised(
                            revision=self.next("revision"),
                            action=step.action,
                            args=step.args,
                            heard=step.heard,
                            supersedes=self.agent.revision or None,
                            understood_event_id=step.understood_event_id,
                        )
                    )
                case Lookup():
                    self._lookup(step)
                case Propose():
                    self._propose(step)
                case Commit():
                    self._commit(step)

    def _say(self, step: Say) -> None:
        event = self.record(
            AgentUtterance(
                text=step.text,
                purpose=step.purpose,
                duration_ms=0,
                proposal_id=step.proposal_id,
                retrieval_event_id=step.retrieval_event_id,
            )
        )
        self.said.append((event.id, step.text))

    def _retrieve(self, step: Retrieve) -> None:
        answer = self.habit.answer(step.query) if self.habit else None
        if answer is not None:
            self._say(Say(answer, "answer"))
        else:
            # The window the lab gave with the turn; a question it gave none for is not covered.
            self.record(
                RetrievalDone(
                    understood_event_id=step.understood_event_id,
                    query=step.query,
                    retriever="given",
                    knowledge_base="given",
                    chunks=self.knowledge,
                    confidence=max((chunk.score for chunk in self.knowledge), default=0.0),
                )
            )

    def _decide(self, request: GateRequest, *, guarded: bool = True) -> tuple[bool, Event | None]:
        if not guarded:
            return True, None
        decision = self.record(self.gate.decide(request))
        assert decision.payload.type == "gate.decision"
        return decision.payload.outcome is not Outcome.BLOCK, decision

    def _call(self, action: Action, operation: Operation, args: Args) -> WireCall:
        name = tool_name(action, operation)
        return WireCall(f"call_{self.next('call')}", name, tool_args(name, args))

    def _lookup(self, step: Lookup) -> None:
        request = step.request()
        allowed, decision = self._decide(request)
        if allowed:
            call = self._call(step.action, Operation.LOOKUP, step.query)
            self.waiting = _Waiting(call, step, decision_id=decision.id if decision else None)

    def _looked_up(self, step: Lookup, decision_id: str | None, body: dict[str, Any]) -> None:
        attempt = self.next(f"lookup-{step.revision}")
        attempt_id = f"lk-{step.revision}-{attempt}"
        self.record(
            LookupStarted(
                attempt_id=attempt_id,
                attempt=attempt,
                revision=step.revision,
                action=step.action,
                query=step.query,
                authorized_by=decision_id,
            )
        )
        if body.get("kind") == "ok":
            self.record(LookupSucceeded(attempt_id=attempt_id, options=options_of(body)))
            return
        reason = str(body.get("reason") or body.get("kind") or "the lookup failed")
        timed_out = "timeout" in reason.lower() or "time" in str(body.get("content", "")).lower()
        self.record(
            LookupFailed(
                attempt_id=attempt_id,
                failure_kind="timeout" if timed_out else "error",
                reason=reason,
            )
        )

    def _propose(self, step: Propose) -> None:
        guarded = self.habit is None or self.habit.guarded(self, step)
        request = step.request()
        if self._decide(request, guarded=guarded)[0]:
            self.record(step.made(f"p-{self.next('proposal')}"))

    def _commit(self, step: Commit) -> None:
        proposal = step.proposal
        guarded = self.habit is None or self.habit.guarded(self, step)
        request = step.request(
            action=self.agent.action or Action.BOOK, revision=self.agent.revision
        )
        allowed, decision = self._decide(request, guarded=guarded)
        if not allowed or proposal is None:
            return
        key = (
            decision.payload.idempotency_key
            if decision is not None and decision.payload.type == "gate.decision"
            else None
        ) or f"own-{step.confirmation_event_id}"
        again = self.habit is not None and self.habit.again(self, step)
        done = self.receipts.get(proposal.proposal_id)
        if done is not None and not again:
            # A repeated yes: the booking is made, so the agent says so instead of calling again.
            self._record_commit(step, key, decision, done, True)
            return
        call = self._call(proposal.action, Operation.COMMIT, proposal.args)
        self.waiting = _Waiting(call, step, key=key, decision_id=decision.id if decision else None)

    def _committed(self, step: Commit, waiting: _Waiting, body: dict[str, Any]) -> None:
        proposal, key = step.proposal, waiting.key or waiting.call.call_id
        assert proposal is not None
        if body.get("kind") != "ok":
            self._record_commit(step, key, None, None, False)
            attempt_id = f"cm-{self.counters['commit']}"
            reason = str(body.get("reason") or body.get("kind") or "the tool refused")
            self.record(CommitFailed(attempt_id=attempt_id, failure_kind="error", reason=reason))
            return
        receipt, replayed = receipt_of(body, waiting.call, key, proposal)
        self.receipts.setdefault(proposal.proposal_id, receipt)
        self._record_commit(step, key, None, receipt, replayed)

    def _record_commit(
        self,
        step: Commit,
        key: str,
        decision: Event | None,
        receipt: Receipt | None,
        replayed: bool,
    ) -> str:
        proposal = step.proposal
        assert proposal is not None
        attempt_id = f"cm-{self.next('commit')}"
        self.record(
            CommitStarted(
                attempt_id=attempt_id,
                idempotency_key=key,
                action=proposal.action,
                args=proposal.args,
                args_hash=proposal.args_hash,
                revision=proposal.revision,
                proposal_id=proposal.proposal_id,
                confirmation_event_id=step.confirmation_event_id,
                authorized_by=decision.id if decision else None,
            )
        )
        if receipt is not None:
            self.record(CommitSucceeded(attempt_id=attempt_id, receipt=receipt, replayed=replayed))
        return attempt_id

    def event(self, event_id: str) -> Event | None:
        return next((event for event in self.chain.events if event.id == event_id), None)


def replay(
    messages: list[dict[str, Any]],
    *,
    tools: frozenset[Action],
    week: Week,
    habit: Habit | None = None,
) -> Reply:
    """The reference agent's next assistant message after this history."""
    conversation = Replay(tools=tools, week=week, habit=habit)
    for message in messages:
        conversation.feed(message)
    return conversation.reply()
