"""A whole call without Django: the real agent and gate over an in-memory log and the fixtures.

Tools answer from the fixture files directly, so dialogue tests run thousands of turns fast.
"""

from __future__ import annotations

import json
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from lab.events.chain import EventChain
from lab.events.types import (
    PARTS_OF_DAY,
    Action,
    AgentInterrupted,
    AgentUtterance,
    Args,
    CallerUtterance,
    Channel,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    GateRequest,
    IntentRevised,
    LookupStarted,
    LookupSucceeded,
    Mode,
    Outcome,
    Receipt,
    RunStarted,
)
from lab.policy.gate import GateState
from lab.runs.retrieval import tenant_retriever
from lab.scripted.answers import Retrieve, retrieve
from lab.scripted.dialogue import ScriptedAgent
from lab.scripted.setup import calendar_week
from lab.scripted.steps import Commit, Lookup, Propose, Revise, Say, Step

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SLOTS: list[Args] = json.loads((FIXTURES / "calendar.json").read_text())["slots"]
ORDERS: list[dict[str, object]] = json.loads((FIXTURES / "ledger.json").read_text())["orders"]
AT = datetime(2025, 3, 9, tzinfo=UTC)
P = TypeVar("P", bound=BaseModel)


def calendar_lookup(query: Args) -> list[Args]:
    options = []
    for slot in SLOTS:
        part = query.get("part_of_day")
        start, end = PARTS_OF_DAY[str(part)] if part else (0, 24)
        if "day" in query and slot["day"] != query["day"]:
            continue
        if not start <= int(str(slot["time"])[:2]) < end:
            continue
        if "time" in query and slot["time"] != query["time"]:
            continue
        options.append(dict(slot))
    return options


def ledger_lookup(query: Args) -> list[Args]:
    return [
        {"order_number": str(order["order_number"]), "max_amount_cents": int(order["paid_cents"])}  # type: ignore[call-overload]
        for order in ORDERS
        if order["order_number"] == query.get("order_number")
    ]


class Call:
    """One simulated call: say() a caller line, read what the agent said back."""

    def __init__(self, *, guarded: bool = True, tools: frozenset[Action] = frozenset(Action)):
        self.guarded = guarded
        self.chain = EventChain()
        self.gate = GateState()
        self.agent = ScriptedAgent(naive=not guarded, tools=tools, week=calendar_week())
        self.steps: deque[Step] = deque()
        self.receipts: dict[str, Receipt] = {}
        self.counters: dict[str, int] = {}
        self.record(
            RunStarted(
                run_id="run-1",
                scenario_id="free",
                scenario_version=1,
                contract_hash="0" * 64,
                mode=Mode.GUARDED if guarded else Mode.UNGUARDED,
                channel=Channel.TYPED,
                evaluator_version="test",
                gate_version="test",
                agent_version="test",
            )
        )
        self.steps.extend(self.agent.greet())
        self.drain()

    @property
    def events(self) -> list[Event]:
        return self.chain.events

    def next(self, name: str) -> int:
        self.counters[name] = self.counters.get(name, 0) + 1
        return self.counters[name]

    def record(self, payload: EventPayload) -> Event:
        event = self.chain.append(payload, at=AT)
        if self.guarded:
            self.gate.apply(event)
            for reaction in self.gate.reactions(event):
                self.record(reaction)
        self.steps.extend(self.agent.observe(event))
        return event

    def say(self, text: str, *, interrupting: bool = False) -> list[AgentUtterance]:
        """One caller line; interrupting cuts the agent's last utterance, as a barge-in does."""
        mark = len(self.events)
        said = self.record(CallerUtterance(text=text, source="typed"))
        if interrupting:
            self.interrupt(said.id)
        self.record(self.agent.understand(text).event(said.id))
        self.drain()
        return [e.payload for e in self.events[mark:] if isinstance(e.payload, AgentUtterance)]

    def interrupt(self, cause_event_id: str) -> None:
        spoken = [(e.id, e.payload) for e in self.events if isinstance(e.payload, AgentUtterance)]
        if spoken:
            utterance_id, utterance = spoken[-1]
            self.record(
                AgentInterrupted(
                    utterance_event_id=utterance_id,
                    cause_event_id=cause_event_id,
                    heard_ms=100,
                    heard_text=utterance.text.split()[0],
                )
            )

    def of_type(self, kind: type[P]) -> list[P]:
        return [e.payload for e in self.events if isinstance(e.payload, kind)]

    def drain(self) -> None:
        while self.steps:
            match self.steps.popleft():
                case Say() as say:
                    self.record(
                        AgentUtterance(
                            text=say.text,
                            purpose=say.purpose,  # type: ignore[arg-type]
                            duration_ms=100,
                            proposal_id=say.proposal_id,
                            retrieval_event_id=say.retrieval_event_id,
                        )
                    )
                case Retrieve() as question:
                    self.record(retrieve(question, tenant_retriever()))
                case Revise() as revise:
                    self.record(
                        IntentRevised(
                            revision=self.next("revision"),
                            action=revise.action,
                            args=revise.args,
                            heard=revise.heard,
                            supersedes=self.agent.revision or None,
                            understood_event_id=revise.understood_event_id,
                        )
                    )
                case Lookup() as lookup:
                    self._lookup(lookup)
                case Propose() as propose:
                    self._propose(propose)
                case Commit() as commit:
                    self._commit(commit)

    def _allowed(self, request: GateRequest) -> tuple[bool, str | None, str | None]:
        if not self.guarded:
            return True, None, None
        decision = self.record(self.gate.decide(request))
        payload = decision.payload
        assert payload.type == "gate.decision"
        return payload.outcome is not Outcome.BLOCK, decision.id, payload.idempotency_key

    def _lookup(self, step: Lookup) -> None:
        request = step.request()
        allowed, decision_id, _ = self._allowed(request)
        if not allowed:
            return
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
        found = calendar_lookup if step.action is Action.BOOK else ledger_lookup
        self.record(LookupSucceeded(attempt_id=attempt_id, options=found(step.query)))

    def _propose(self, step: Propose) -> None:
        request = step.request()
        if self._allowed(request)[0]:
            self.record(step.made(f"p-{self.next('proposal')}"))

    def _commit(self, step: Commit) -> None:
        proposal = step.proposal
        request = step.request(action=Action.BOOK, revision=self.agent.revision)
        allowed, decision_id, key = self._allowed(request)
        if not allowed or proposal is None:
            return
        key = key or f"unguarded-{step.confirmation_event_id}"
        number = self.next("commit")
        self.record(
            CommitStarted(
                attempt_id=f"cm-{number}",
                idempotency_key=key,
                action=proposal.action,
                args=proposal.args,
                args_hash=proposal.args_hash,
                revision=proposal.revision,
                proposal_id=proposal.proposal_id,
                confirmation_event_id=step.confirmation_event_id,
                authorized_by=decision_id,
            )
        )
        replayed = key in self.receipts
        receipt = self.receipts.setdefault(
            key,
            Receipt(
                receipt_id=f"R-{number}",
                execution_id=f"x-{number}",
                idempotency_key=key,
                adapter="test",
                action=proposal.action,
                args=proposal.args,
            ),
        )
        self.record(CommitSucceeded(attempt_id=f"cm-{number}", receipt=receipt, replayed=replayed))
