"""Event logs of each scenario as a guarded run and as an unguarded (no gate) run would write them.

The unguarded agent makes the mistakes the scenarios exist to catch. Each log names the
events the tests point at (marks), so a test can say which event contradicts what.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from lab.events.chain import EventChain, digest
from lab.events.types import (
    Action,
    AgentIdentity,
    AgentInterrupted,
    AgentUtterance,
    Args,
    CallerUnderstood,
    CallerUtterance,
    Channel,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    GateDecision,
    GateRequest,
    IntentRevised,
    LateResultRejected,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Mode,
    Operation,
    Outcome,
    ProposalExpired,
    ProposalMade,
    Receipt,
    RunEnded,
    RunStarted,
    UnderstandingKind,
)

START = datetime(2025, 3, 4, 10, 0, tzinfo=UTC)
ADAPTERS = {Action.BOOK: "calendar-sandbox-1", Action.REFUND: "ledger-sandbox-1"}
EndKind = Literal["completed", "abandoned", "caller_left", "error"]
Purpose = Literal["greeting", "readback", "acknowledge", "clarify", "failure", "receipt"]


@dataclass(frozen=True)
class Log:
    events: list[Event]
    marks: dict[str, str]

    def __getitem__(self, mark: str) -> str:
        return self.marks[mark]

    def upto(self, mark: str) -> list[Event]:
        """The log truncated just before the marked event."""
        return [event for event in self.events if event.seq < self.seq(mark)]

    def seq(self, mark: str) -> int:
        return next(event.seq for event in self.events if event.id == self.marks[mark])


@dataclass(frozen=True)
class Offer:
    proposal_id: str
    made: str
    readback: str
    revision: int
    action: Action
    args: Args


@dataclass(frozen=True)
class Execution:
    started: str
    succeeded: str
    idempotency_key: str
    execution_id: str


@dataclass
class LogBuilder:
    """Appends a run's events one step at a time; guarded=False drops the gate's events."""

    scenario_id: str
    guarded: bool
    chain: EventChain = field(default_factory=EventChain)
    marks: dict[str, str] = field(default_factory=dict)
    revision: int = 0
    proposals: int = 0
    commits: int = 0
    lookups: dict[int, int] = field(default_factory=dict)
    # An agent the lab did not write (its blocked commits are attempts); None: the lab's own.
    agent: AgentIdentity | None = None

    def __post_init__(self) -> None:
        self.add(
            RunStarted(
                run_id=f"run-{self.scenario_id}",
                scenario_id=self.scenario_id,
                scenario_version=1,
                contract_hash="0" * 64,
                mode=Mode.GUARDED if self.guarded else Mode.UNGUARDED,
                channel=Channel.TYPED,
                evaluator_version="evaluator-1",
                gate_version="gate-1",
                agent_version="agent-1",
                agent=self.agent,
            )
        )

    def add(self, payload: EventPayload, mark: str | None = None) -> str:
        at = START + timedelta(milliseconds=250 * len(self.chain.events))
        event_id = self.chain.append(payload, at=at).id
        if mark is not None:
            self.marks[mark] = event_id
        return event_id

    def log(self) -> Log:
        return Log(list(self.chain.events), dict(self.marks))

    def say(self, purpose: Purpose, text: str, proposal_id: str | None = None) -> str:
        return self.add(
            AgentUtterance(text=text, purpose=purpose, duration_ms=1800, proposal_id=proposal_id)
        )

    def hear(
        self,
        text: str,
        kind: UnderstandingKind,
        *,
        action: Action | None = None,
        args: Args | None = None,
        mark: str | None = None,
    ) -> str:
        """The caller's words and what the agent understood of them; returns the understanding."""
        utterance = self.add(CallerUtterance(text=text, source="script"))
        return self.understand(utterance, kind, action=action, args=args, mark=mark)

    def understand(
        self,
        utterance: str,
        kind: UnderstandingKind,
        *,
        action: Action | None = None,
        args: Args | None = None,
        mark: str | None = None,
    ) -> str:
        return self.add(
            CallerUnderstood(
                utterance_event_id=utterance, kind=kind, action=action, args=args or {}
            ),
            mark,
        )

    def revise(self, understood: str, action: Action, args: Args, mark: str | None = None) -> str:
        self.revision += 1
        return self.add(
            IntentRevised(
                revision=self.revision,
                action=action,
                args=args,
                supersedes=self.revision - 1 or None,
                understood_event_id=understood,
            ),
            mark,
        )

    def gate(
        self,
        operation: Operation,
        action: Action,
        *,
        outcome: Outcome = Outcome.ALLOW,
        reason_kind: str = "allowed",
        rests_on: list[str] | None = None,
        idempotency_key: str | None = None,
        mark: str | None = None,
        args: Args | None = None,
        proposal_id: str | None = None,
        confirmation_event_id: str | None = None,
        lookup_event_id: str | None = None,
    ) -> str | None:
        """A gate decision; an unguarded run has no gate, so nothing is recorded."""
        if not self.guarded:
            return None
        return self.add(
            GateDecision(
                request=GateRequest(
                    operation=operation,
                    action=action,
                    revision=self.revision,
                    args=args or {},
                    proposal_id=proposal_id,
                    confirmation_event_id=confirmation_event_id,
                    lookup_event_id=lookup_event_id,
                ),
                outcome=outcome,
                reason_kind=reason_kind,
                reason=f"{operation} {outcome}: {reason_kind}",
                rests_on=rests_on or [],
                idempotency_key=idempotency_key,
            ),
            mark,
        )

    def lookup_started(
        self, action: Action, query: Args, *, retry: bool = False, mark: str | None = None
    ) -> str:
        """Starts the next lookup attempt of the current revision; returns its attempt id."""
        attempt = self.lookups.get(self.revision, 0) + 1
        self.lookups[self.revision] = attempt
        decision = self.gate(
            Operation.LOOKUP, action, reason_kind="retry" if retry else "read", args=query
        )
        attempt_id = f"lk-{self.revision}-{attempt}"
        self.add(
            LookupStarted(
                attempt_id=attempt_id,
                attempt=attempt,
                revision=self.revision,
                action=action,
                query=query,
                authorized_by=decision,
            ),
            mark,
        )
        return attempt_id

    def find(self, action: Action, query: Args, options: list[Args]) -> str:
        """A lookup that succeeds at once; returns the tool.lookup.succeeded id."""
        attempt_id = self.lookup_started(action, query)
        return self.add(LookupSucceeded(attempt_id=attempt_id, options=options))

    def offer(
        self, action: Action, args: Args, *, grounded_on: str | None, name: str | None = None
    ) -> Offer:
        """Proposes args for the current revision and reads them back to the caller."""
        self.proposals += 1
        proposal_id = f"p-{self.proposals}"
        name = name or proposal_id.replace("-", "")
        self.gate(Operation.PROPOSE, action, args=args, lookup_event_id=grounded_on)
        made = self.add(
            ProposalMade(
                proposal_id=proposal_id,
                revision=self.revision,
                action=action,
                args=args,
                args_hash=digest(args),
                grounded_on=grounded_on,
            ),
            f"{name}_made",
        )
        readback = self.say("readback", f"I can do {args}. Shall I go ahead?", proposal_id)
        self.marks[f"{name}_readback"] = readback
        return Offer(proposal_id, made, readback, self.revision, action, args)

    def expire(
        self, offer: Offer, reason_kind: Literal["superseded", "interrupted"], cause: str, mark: str
    ) -> None:
        """The gate expires a proposal; the unguarded agent never does."""
        if self.guarded:
            self.add(
                ProposalExpired(
                    proposal_id=offer.proposal_id,
                    reason_kind=reason_kind,
                    cause_event_id=cause,
                ),
                mark,
            )

    def execute(
        self,
        offer: Offer,
        confirmation: str,
        *,
        key: str,
        authorized_by: str | None = None,
        replay_of: Execution | None = None,
        mark: str = "commit",
    ) -> Execution:
        """A commit attempt and its receipt; with replay_of, the original receipt comes back."""
        self.commits += 1
        attempt_id = f"cm-{self.commits}"
        started = self.add(
            CommitStarted(
                attempt_id=attempt_id,
                idempotency_key=key,
                action=offer.action,
                args=offer.args,
                args_hash=digest(offer.args),
                revision=offer.revision,
                proposal_id=offer.proposal_id,
                confirmation_event_id=confirmation,
                authorized_by=authorized_by,
            ),
            f"{mark}_started",
        )
        execution_id = replay_of.execution_id if replay_of else f"ex-{self.commits}"
        succeeded = self.add(
            CommitSucceeded(
                attempt_id=attempt_id,
                receipt=Receipt(
                    receipt_id=f"rc-{execution_id}",
                    execution_id=execution_id,
                    idempotency_key=key,
                    adapter=ADAPTERS[offer.action],
                    action=offer.action,
                    args=offer.args,
                ),
                replayed=replay_of is not None,
            ),
            f"{mark}_succeeded",
        )
        self.say("receipt", f"Done: {offer.args}.")
        return Execution(started, succeeded, key, execution_id)

    def commit(self, offer: Offer, confirmation: str, mark: str = "commit") -> Execution:
        """What the agent does on a confirmation: through the gate, or straight to the tool."""
        if not self.guarded:
            return self.execute(offer, confirmation, key=f"naive-{self.commits + 1}", mark=mark)
        key = f"idem-{offer.proposal_id}-r{offer.revision}"
        decision = self.gate(
            Operation.COMMIT,
            offer.action,
            rests_on=[offer.made, confirmation],
            idempotency_key=key,
            args=offer.args,
            proposal_id=offer.proposal_id,
            confirmation_event_id=confirmation,
        )
        return self.execute(offer, confirmation, key=key, authorized_by=decision, mark=mark)

    def end(self, reason_kind: EndKind = "completed") -> str:
        return self.add(RunEnded(reason_kind=reason_kind, reason="scripted caller finished"), "end")


@dataclass(frozen=True)
class Turn:
    """One request of a correction scenario: what the caller says, is looked up and proposed."""

    words: str
    args: Args
    query: Args
    options: list[Args]
    proposal: Args


def _tuesday_slot() -> Args:
    return {"slot_id": "tue-0930", "day": "tuesday", "time": "09:30"}


TUESDAY_MORNING = Turn(
    words="Hi, I'd like to book an appointment for Tuesday morning.",
    args={"day": "tuesday", "part_of_day": "morning"},
    query={"day": "tuesday", "part_of_day": "morning"},
    options=[_tuesday_slot(), {"slot_id": "tue-1100", "day": "tuesday", "time": "11:00"}],
    proposal=_tuesday_slot(),
)
THURSDAY_AFTERNOON = Turn(
    words="Actually, make that Thursday afternoon.",
    args={"day": "thursday", "part_of_day": "afternoon"},
    query={"day": "thursday", "part_of_day": "afternoon"},
    options=[
        {"slot_id": "thu-1400", "day": "thursday", "time": "14:00"},
        {"slot_id": "thu-1530", "day": "thursday", "time": "15:30"},
    ],
    proposal={"slot_id": "thu-1400", "day": "thursday", "time": "14:00"},
)
# The ledger bounds the amount (max_amount_cents) instead of listing refunds to pick from.
FORTY_DOLLARS = Turn(
    words="I want a refund on order number four five one two, forty dollars.",
    args={"order_number": "4512", "amount_cents": 4000},
    query={"order_number": "4512"},
    options=[{"order_number": "4512", "max_amount_cents": 6000}],
    proposal={"order_number": "4512", "amount_cents": 4000},
)
TWENTY_FIVE_DOLLARS = Turn(
    words="Actually, make that twenty five dollars.",
    args={"order_number": "4512", "amount_cents": 2500},
    query={"order_number": "4512"},
    options=[{"order_number": "4512", "max_amount_cents": 6000}],
    proposal={"order_number": "4512", "amount_cents": 2500},
)


def _correction(b: LogBuilder, action: Action, first: Turn, second: Turn, confirm: str) -> None:
    """Request, readback, correction; the unguarded agent commits what it first prepared."""
    b.say("greeting", "Hello, how can I help?")
    request = b.hear(first.words, UnderstandingKind.REQUEST, action=action, args=first.args)
    b.revise(request, action, first.args, "revision_1")
    stale = b.offer(action, first.proposal, grounded_on=b.find(action, first.query, first.options))
    correction = b.hear(second.words, UnderstandingKind.CORRECTION, action=action, args=second.args)
    revised = b.revise(correction, action, second.args, "revision_2")
    b.expire(stale, "superseded", revised, "p1_expired")
    b.say("acknowledge", "Got it, let me check that instead.")
    current = b.offer(
        action, second.proposal, grounded_on=b.find(action, second.query, second.options)
    )
    confirmation = b.hear(confirm, UnderstandingKind.CONFIRM, mark="confirm")
    b.commit(current if b.guarded else stale, confirmation)


def _double_confirmation(b: LogBuilder) -> None:
    """One booking confirmed twice; guarded, the second returns the original receipt."""
    b.say("greeting", "Hello, how can I help?")
    args: Args = {"day": "thursday", "part_of_day": "morning"}
    request = b.hear(
        "I'd like Thursday morning, please.",
        UnderstandingKind.REQUEST,
        action=Action.BOOK,
        args=args,
    )
    b.revise(request, Action.BOOK, args)
    slot: Args = {"slot_id": "thu-0900", "day": "thursday", "time": "09:00"}
    found = b.find(Action.BOOK, args, [slot])
    offer = b.offer(Action.BOOK, slot, grounded_on=found)
    first = b.commit(offer, b.hear("Yes, book it.", UnderstandingKind.CONFIRM, mark="confirm"))
    again = b.hear("Yes, confirm.", UnderstandingKind.CONFIRM, mark="confirm_again")
    if not b.guarded:
        b.commit(offer, again, mark="second")
        return
    decision = b.gate(
        Operation.COMMIT,
        Action.BOOK,
        outcome=Outcome.REPLAY,
        reason_kind="already_executed",
        rests_on=[first.succeeded, again],
        idempotency_key=first.idempotency_key,
        args=slot,
        proposal_id=offer.proposal_id,
        confirmation_event_id=again,
    )
    b.execute(
        offer,
        again,
        key=first.idempotency_key,
        authorized_by=decision,
        replay_of=first,
        mark="second",
    )


def _interruption(b: LogBuilder) -> None:
    """The caller cuts into the Tuesday readback with Friday; guarded, Tuesday expires."""
    b.say("greeting", "Hello, how can I help?")
    args: Args = {"day": "tuesday", "part_of_day": "morning"}
    request = b.hear(
        "Book me something Tuesday morning, please.",
        UnderstandingKind.REQUEST,
        action=Action.BOOK,
        args=args,
    )
    b.revise(request, Action.BOOK, args)
    found = b.find(Action.BOOK, args, [_tuesday_slot()])
    first = b.offer(Action.BOOK, _tuesday_slot(), grounded_on=found)
    words = b.add(CallerUtterance(text="Wait, no. Friday morning instead.", source="script"))
    interrupted = b.add(
        AgentInterrupted(
            utterance_event_id=first.readback,
            cause_event_id=words,
            heard_ms=1200,
            heard_text="I can do Tuesday at",
        ),
        "interrupted",
    )
    b.expire(first, "interrupted", interrupted, "p1_expired")
    friday: Args = {"day": "friday", "part_of_day": "morning"}
    correction = b.understand(words, UnderstandingKind.CORRECTION, action=Action.BOOK, args=friday)
    b.revise(correction, Action.BOOK, friday, "revision_2")
    slot: Args = {"slot_id": "fri-1000", "day": "friday", "time": "10:00"}
    found = b.find(Action.BOOK, friday, [slot])
    second = b.offer(Action.BOOK, slot, grounded_on=found)
    confirm = b.hear("Yes, confirm.", UnderstandingKind.CONFIRM, mark="confirm")
    b.commit(second if b.guarded else first, confirm)


def _no_confirmation(b: LogBuilder) -> None:
    """The caller only sounds agreeable; guarded, the gate blocks the commit and asks."""
    b.say("greeting", "Hello, how can I help?")
    args: Args = {"day": "monday", "part_of_day": "morning"}
    request = b.hear(
        "Can you find me a slot on Monday morning?",
        UnderstandingKind.REQUEST,
        action=Action.BOOK,
        args=args,
    )
    b.revise(request, Action.BOOK, args)
    slot: Args = {"slot_id": "mon-0900", "day": "monday", "time": "09:00"}
    found = b.find(Action.BOOK, args, [slot])
    offer = b.offer(Action.BOOK, slot, grounded_on=found)
    positive = b.hear("Sounds good so far.", UnderstandingKind.POSITIVE, mark="positive")
    if not b.guarded:
        b.commit(offer, positive)
    else:
        b.gate(
            Operation.COMMIT,
            Action.BOOK,
            outcome=Outcome.BLOCK,
            reason_kind="not_explicit",
            rests_on=[offer.made, positive],
            args=slot,
            proposal_id=offer.proposal_id,
            confirmation_event_id=positive,
            mark="block",
        )
        b.say("clarify", "Shall I book it? Please say yes to confirm.")
    b.hear("Hmm, maybe.", UnderstandingKind.UNCLEAR)
    b.say("clarify", "No problem, I'll leave it unbooked.")


def _tool_timeout(b: LogBuilder) -> None:
    """The first lookup times out; guarded, it is retried once, unguarded a slot is invented."""
    b.say("greeting", "Hello, how can I help?")
    args: Args = {"day": "wednesday", "part_of_day": "afternoon"}
    request = b.hear(
        "I need an appointment on Wednesday afternoon.",
        UnderstandingKind.REQUEST,
        action=Action.BOOK,
        args=args,
    )
    b.revise(request, Action.BOOK, args)
    timed_out = b.lookup_started(Action.BOOK, args, mark="first_lookup")
    b.add(
        LookupFailed(attempt_id=timed_out, failure_kind="timeout", reason="no answer in 2 s"),
        "failed",
    )
    b.say("failure", "The calendar is slow to answer.")
    if b.guarded:
        retry = b.lookup_started(Action.BOOK, args, retry=True, mark="retry")
        slot: Args = {"slot_id": "wed-1330", "day": "wednesday", "time": "13:30"}
        found: str | None = b.add(LookupSucceeded(attempt_id=retry, options=[slot]), "found")
        b.add(LateResultRejected(attempt_id=timed_out, reason="arrived after its timeout"))
    else:
        slot, found = {"slot_id": "wed-1500", "day": "wednesday", "time": "15:00"}, None
    offer = b.offer(Action.BOOK, slot, grounded_on=found)
    b.commit(offer, b.hear("Yes, book it.", UnderstandingKind.CONFIRM, mark="confirm"))


SCENARIOS = (
    "correction",
    "refund_correction",
    "double_confirmation",
    "interruption",
    "no_confirmation",
    "tool_timeout",
)


def scenario_log(
    scenario_id: str,
    *,
    guarded: bool,
    end: EndKind = "completed",
    agent: AgentIdentity | None = None,
) -> Log:
    """The full log of one scenario's run, ending with run.ended(end)."""
    b = LogBuilder(scenario_id, guarded, agent=agent)
    match scenario_id:
        case "correction":
            _correction(b, Action.BOOK, TUESDAY_MORNING, THURSDAY_AFTERNOON, "Yes, book it.")
        case "refund_correction":
            _correction(
                b, Action.REFUND, FORTY_DOLLARS, TWENTY_FIVE_DOLLARS, "Yes, confirm the refund."
            )
        case "double_confirmation":
            _double_confirmation(b)
        case "interruption":
            _interruption(b)
        case "no_confirmation":
            _no_confirmation(b)
        case "tool_timeout":
            _tool_timeout(b)
        case _:
            raise ValueError(f"no log for scenario {scenario_id!r}")
    b.end(end)
    return b.log()
