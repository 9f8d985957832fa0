"""Properties of the gate over random interleavings of caller turns, interruptions and tool faults.

A reference driver applies the gate's decisions faithfully; an audit then reads the log it wrote.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.events.chain import EventChain, digest
from lab.events.types import (
    Action,
    AgentInterrupted,
    AgentUtterance,
    Args,
    CallerUnderstood,
    CallerUtterance,
    Channel,
    CommitFailed,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    GateDecision,
    GateRequest,
    IntentRevised,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Mode,
    Operation,
    Outcome,
    ProposalExpired,
    ProposalMade,
    Receipt,
    RunStarted,
    SpeechStarted,
    UnderstandingKind,
)
from lab.policy.gate import GATE_VERSION, GateState, idempotency_key

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RUN_ID = "run-prop"
SLOTS: list[Args] = [
    {"day": "monday", "time": "09:00"},
    {"day": "tuesday", "time": "14:00"},
    {"day": "friday", "time": "11:00"},
]
INVENTED: Args = {"day": "sunday", "time": "03:00"}
# "agent" is the agent's natural next move; the other agent steps are arbitrary, adversarial ones.
STEPS = (
    "request",
    "confirm",
    "confirm",
    "positive",
    "decline",
    "interrupt",
    "agent",
    "agent",
    "agent",
    "agent",
    "lookup",
    "lookup_ends",
    "propose",
    "commit",
    "commit",
    "commit_ends",
)
Step = tuple[str, int, int]


class Driver:
    """A faithful agent and tool around one gate: it acts only on what the gate decides."""

    def __init__(self, gate: GateState) -> None:
        self.chain = EventChain()
        self.gate = gate
        self.revision = 0
        self.revision_args: dict[int, Args] = {}
        self.understood: list[Event] = []
        self.lookups_in_flight: list[tuple[str, int]] = []
        self.answers: list[tuple[str, int, list[Args]]] = []
        self.proposals: list[ProposalMade] = []
        self.readbacks: list[str] = []
        self.commits_in_flight: list[CommitStarted] = []
        self.first_start: dict[str, CommitStarted] = {}
        # The tool's own storage: what actually ran, by key, and how often per proposal.
        self.stored: dict[str, Receipt] = {}
        self.executions: Counter[str] = Counter()
        self.counter = 0

    def run(self, steps: list[Step]) -> list[Event]:
        self.add(
            RunStarted(
                run_id=RUN_ID,
                scenario_id="book-appointment",
                scenario_version=1,
                contract_hash="c" * 64,
                mode=Mode.GUARDED,
                channel=Channel.TYPED,
                evaluator_version="eval-1",
                gate_version=GATE_VERSION,
                agent_version="agent-1",
            )
        )
        for name, a, b in steps:
            getattr(self, f"step_{name}")(a, b)
        return self.chain.events

    def add(self, payload: EventPayload) -> Event:
        at = T0 + timedelta(milliseconds=len(self.chain.events) + 1)
        event = self.chain.append(payload, at=at)
        self.gate.apply(event)
        for reaction in self.gate.reactions(event):
            self.add(reaction)
        return event

    def next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter}"

    def ask(self, request: GateRequest) -> tuple[GateDecision, Event]:
        decision = self.gate.decide(request)
        return decision, self.add(decision)

    # The caller

    def say(self, kind: UnderstandingKind, args: Args | None = None) -> Event:
        utterance = self.add(CallerUtterance(text=kind.value, source="script"))
        understood = self.add(
            CallerUnderstood(
                utterance_event_id=utterance.id,
                kind=kind,
                action=Action.BOOK if args else None,
                args=args or {},
            )
        )
        self.understood.append(understood)
        return understood

    def step_request(self, a: int, b: int) -> None:
        args = SLOTS[a % len(SLOTS)]
        kind = UnderstandingKind.CORRECTION if self.revision else UnderstandingKind.REQUEST
        understood = self.say(kind, args)
        self.revision += 1
        self.revision_args[self.revision] = args
        self.add(
            IntentRevised(
                revision=self.revision,
                action=Action.BOOK,
                args=args,
                supersedes=self.revision - 1 or None,
                understood_event_id=understood.id,
            )
        )

    def step_confirm(self, a: int, b: int) -> None:
        self.say(UnderstandingKind.CONFIRM)

    def step_positive(self, a: int, b: int) -> None:
        self.say(UnderstandingKind.POSITIVE)

    def step_decline(self, a: int, b: int) -> None:
        self.say(UnderstandingKind.DECLINE)

    def step_interrupt(self, a: int, b: int) -> None:
        if not self.readbacks:
            return
        speech = self.add(SpeechStarted(stream_ms=1000 * self.counter))
        self.add(
            AgentInterrupted(
                utterance_event_id=self.readbacks[-1 - a % len(self.readbacks)],
                cause_event_id=speech.id,
                heard_ms=700,
                heard_text="Shall I",
            )
        )

    # The agent

    def step_agent(self, a: int, b: int) -> None:
        """The move a well-behaved agent makes next; b picks how its tool call ends."""
        current = [attempt for attempt in self.lookups_in_flight if attempt[1] == self.revision]
        answers = [answer for answer in self.answers if answer[1] == self.revision]
        pending = self.gate.pending_proposal()
        last_said = self.understood[-1] if self.understood else None
        if self.commits_in_flight:
            self.commit_ends(self.commits_in_flight[0], b)
        elif current:
            self.lookup_ends(current[0], b)
        elif pending is None and answers:
            _, _, options = answers[-1]
            self.propose(answers[-1], options[a % len(options)])
        elif pending is None and self.revision:
            self.lookup(self.revision)
        elif pending is not None and last_said is not None:
            self.commit(pending, last_said, pending.args)

    def step_lookup(self, a: int, b: int) -> None:
        # Now and then the agent asks about a revision the caller has already corrected.
        stale = a % 4 == 0 and self.revision > 1
        self.lookup(self.revision - 1 if stale else max(self.revision, 1))

    def step_lookup_ends(self, a: int, b: int) -> None:
        if self.lookups_in_flight:
            self.lookup_ends(self.lookups_in_flight[a % len(self.lookups_in_flight)], b)

    def step_propose(self, a: int, b: int) -> None:
        if self.answers:
            answer = self.answers[a % len(self.answers)]
            self.propose(answer, INVENTED if b % 3 == 0 else answer[2][b % len(answer[2])])
        else:
            self.propose(None, SLOTS[b % len(SLOTS)])

    def step_commit(self, a: int, b: int) -> None:
        if not self.proposals or not self.understood:
            return
        proposal = self.proposals[-1 - a % len(self.proposals)]
        args = INVENTED if b % 7 == 6 else proposal.args
        self.commit(proposal, self.understood[-1 - b % len(self.understood)], args)

    def step_commit_ends(self, a: int, b: int) -> None:
        if self.commits_in_flight:
            self.commit_ends(self.commits_in_flight[a % len(self.commits_in_flight)], b)

    def lookup(self, revision: int) -> None:
        decision, authorized = self.ask(
            GateRequest(operation=Operation.LOOKUP, action=Action.BOOK, revision=revision)
        )
        if decision.outcome is Outcome.ALLOW:
            attempt_id = self.next_id("lk")
            self.add(
                LookupStarted(
                    attempt_id=attempt_id,
                    attempt=1 if decision.reason_kind == "read" else 2,
                    revision=revision,
                    action=Action.BOOK,
                    query=self.revision_args[revision],
                    authorized_by=authorized.id,
                )
            )
            self.lookups_in_flight.append((attempt_id, revision))

    def lookup_ends(self, attempt: tuple[str, int], b: int) -> None:
        self.lookups_in_flight.remove(attempt)
        attempt_id, revision = attempt
        options = [self.revision_args[revision], SLOTS[b % len(SLOTS)]]
        match b % 6:
            case 4:
                self.add(LookupFailed(attempt_id=attempt_id, failure_kind="error", reason="500"))
            case 5:
                self.add(LookupFailed(attempt_id=attempt_id, failure_kind="timeout", reason="5 s"))
                # The late answer is in the log; an agent may still try to ground on it.
                late = self.add(LookupSucceeded(attempt_id=attempt_id, options=options))
                self.answers.append((late.id, revision, options))
            case _:
                answer = self.add(LookupSucceeded(attempt_id=attempt_id, options=options))
                self.answers.append((answer.id, revision, options))

    def propose(self, answer: tuple[str, int, list[Args]] | None, args: Args) -> None:
        answer_id = answer[0] if answer else None
        decision, _ = self.ask(
            GateRequest(
                operation=Operation.PROPOSE,
                action=Action.BOOK,
                revision=max(self.revision, 1),
                args=args,
                lookup_event_id=answer_id,
            )
        )
        if decision.outcome is not Outcome.ALLOW:
            return
        proposal = ProposalMade(
            proposal_id=self.next_id("p"),
            revision=self.revision,
            action=Action.BOOK,
            args=args,
            args_hash=digest(args),
            grounded_on=answer_id,
        )
        self.add(proposal)
        self.proposals.append(proposal)
        readback = self.add(
            AgentUtterance(
                text=f"Shall I book {args['day']}?",
                purpose="readback",
                duration_ms=2000,
                proposal_id=proposal.proposal_id,
            )
        )
        self.readbacks.append(readback.id)

    def commit(self, proposal: ProposalMade, confirmation: Event, args: Args) -> None:
        decision, authorized = self.ask(
            GateRequest(
                operation=Operation.COMMIT,
                action=proposal.action,
                revision=max(self.revision, 1),
                args=args,
                proposal_id=proposal.proposal_id,
                confirmation_event_id=confirmation.id,
            )
        )
        key = decision.idempotency_key
        if decision.outcome is Outcome.ALLOW:
            assert key is not None
            started = self.start(
                CommitStarted(
                    attempt_id="cm",
                    idempotency_key=key,
                    action=proposal.action,
                    args=proposal.args,
                    args_hash=proposal.args_hash,
                    revision=proposal.revision,
                    proposal_id=proposal.proposal_id,
                    confirmation_event_id=confirmation.id,
                    authorized_by=authorized.id,
                )
            )
            self.first_start[key] = started
            self.commits_in_flight.append(started)
        elif decision.outcome is Outcome.REPLAY and decision.reason_kind != "in_flight":
            # A replay re-presents the original request under the same key.
            assert key is not None
            started = self.start(
                self.first_start[key].model_copy(update={"authorized_by": authorized.id})
            )
            if decision.reason_kind == "already_executed":
                receipt = self.stored[key]
                self.add(
                    CommitSucceeded(attempt_id=started.attempt_id, receipt=receipt, replayed=True)
                )
            else:
                self.commits_in_flight.append(started)

    def start(self, template: CommitStarted) -> CommitStarted:
        started = template.model_copy(update={"attempt_id": self.next_id("cm")})
        self.add(started)
        return started

    # The tool

    def commit_ends(self, started: CommitStarted, b: int) -> None:
        self.commits_in_flight.remove(started)
        key = started.idempotency_key
        match b % 6:
            case 4:
                # Timed out after the tool ran: the outcome is uncertain to the agent.
                if key not in self.stored:
                    self.execute(started)
                self.add(
                    CommitFailed(attempt_id=started.attempt_id, failure_kind="timeout", reason="")
                )
            case 5:
                self.add(
                    CommitFailed(attempt_id=started.attempt_id, failure_kind="timeout", reason="")
                )
            case _:
                # Replays return what the tool stored; an authorized first call always runs.
                if key in self.stored and started is not self.first_start[key]:
                    receipt, replayed = self.stored[key], True
                else:
                    receipt, replayed = self.execute(started), False
                self.add(
                    CommitSucceeded(
                        attempt_id=started.attempt_id, receipt=receipt, replayed=replayed
                    )
                )

    def execute(self, started: CommitStarted) -> Receipt:
        self.executions[started.proposal_id or ""] += 1
        receipt = Receipt(
            receipt_id=self.next_id("rc"),
            execution_id=self.next_id("ex"),
            idempotency_key=started.idempotency_key,
            adapter="appointments",
            action=started.action,
            args=started.args,
        )
        self.stored[started.idempotency_key] = receipt
        return receipt


# The audit's invariants, as the messages tag them:
# (a) no commit executes a proposal whose revision is not current at that moment;
# (b) every commit rests on an explicit confirmation, later than its proposal and bound to it;
# (c) at most one execution per idempotency key and per proposal, under the proposal's key;
# (d) a superseded or interrupted pending proposal expires at once and is never committed;
# (e) no revision has more than two lookup attempts;
# (f) every proposal is grounded in an option of a live read of its own revision.
class Audit:
    """Reads a finished log the way the evaluator would and lists every breach, tagged (a)-(f)."""

    def __init__(self, events: list[Event]) -> None:
        self.found: list[str] = []
        self.by_id = {event.id: event for event in events}
        self.run_id = ""
        self.revision: int | None = None
        self.proposals: dict[str, tuple[ProposalMade, int]] = {}
        self.readbacks: dict[str, str] = {}
        self.expired: set[str] = set()
        self.authorized: set[str] = set()
        # Proposals that must lose authority before anything else is recorded, and why.
        self.must_expire: dict[str, str] = {}
        self.lookups: Counter[int] = Counter()
        self.failed_lookups: set[str] = set()
        self.lookup_revisions: dict[str, int] = {}
        self.answers: dict[str, tuple[int, list[Args]]] = {}
        self.commits: dict[str, CommitStarted] = {}
        self.executed_keys: set[str] = set()
        self.fresh: Counter[str] = Counter()
        self.bound: defaultdict[str, set[str]] = defaultdict(set)
        for event in events:
            self.read(event)
        self.expect_expiries(None)

    def read(self, event: Event) -> None:
        self.expect_expiries(event)
        match event.payload:
            case RunStarted(run_id=run_id):
                self.run_id = run_id
            case IntentRevised(revision=revision):
                self.revision = revision
                for proposal_id, (made, _) in self.proposals.items():
                    if made.revision < revision and self.pending(proposal_id):
                        self.must_expire[proposal_id] = event.id
            case AgentUtterance(purpose="readback", proposal_id=str() as proposal_id):
                self.readbacks[event.id] = proposal_id
            case AgentInterrupted(utterance_event_id=utterance_id):
                proposal_id = self.readbacks.get(utterance_id, "")
                if proposal_id and self.pending(proposal_id):
                    self.must_expire[proposal_id] = event.id
            case ProposalMade() as made:
                self.proposals[made.proposal_id] = (made, event.seq)
                self.check_grounding(event, made)
            case ProposalExpired(proposal_id=proposal_id, cause_event_id=cause):
                self.expired.add(proposal_id)
                if self.must_expire.get(proposal_id) == cause:
                    del self.must_expire[proposal_id]
            case LookupStarted(attempt_id=attempt_id, revision=revision):
                self.lookup_revisions[attempt_id] = revision
                self.lookups[revision] += 1
                if self.lookups[revision] > 2:
                    self.found.append(f"(e) revision {revision} has a third lookup at {event.id}")
            case LookupSucceeded(attempt_id=attempt_id, options=options):
                if attempt_id not in self.failed_lookups:
                    self.answers[event.id] = (self.lookup_revisions[attempt_id], options)
            case LookupFailed(attempt_id=attempt_id):
                self.failed_lookups.add(attempt_id)
            case GateDecision() as decision:
                self.check_decision(event, decision)
            case CommitStarted(proposal_id=str() as proposal_id) as started:
                self.check_commit(event, started, proposal_id)
            case CommitSucceeded(attempt_id=attempt_id, replayed=False):
                started = self.commits[attempt_id]
                for name in (started.idempotency_key, started.proposal_id or ""):
                    self.fresh[name] += 1
                    if self.fresh[name] > 1:
                        self.found.append(f"(c) {event.id} executes {name} a second time")

    def pending(self, proposal_id: str) -> bool:
        return proposal_id not in self.expired and proposal_id not in self.authorized

    def expect_expiries(self, event: Event | None) -> None:
        if event is not None and isinstance(event.payload, ProposalExpired):
            return
        for proposal_id, cause in self.must_expire.items():
            self.found.append(f"(d) {proposal_id} kept its authority after {cause}")
        self.must_expire.clear()

    def check_grounding(self, event: Event, made: ProposalMade) -> None:
        revision, options = self.answers.get(made.grounded_on or "", (None, []))
        if revision != made.revision or made.args not in options:
            self.found.append(f"(f) {event.id} proposes what no live read of its revision offered")

    def check_decision(self, event: Event, decision: GateDecision) -> None:
        if any(self.by_id[i].seq >= event.seq for i in decision.rests_on if i in self.by_id) or any(
            i not in self.by_id for i in decision.rests_on
        ):
            self.found.append(f"decision {event.id} rests on a later or unknown event")
        if decision.outcome is Outcome.BLOCK:
            return
        if not decision.rests_on:
            self.found.append(f"decision {event.id} lets a request through on no evidence")
        request = decision.request
        if request.operation is Operation.COMMIT:
            made, _ = self.proposals[request.proposal_id or ""]
            if (request.action, request.args) != (made.action, made.args):
                self.found.append(f"(b) {event.id} lets through what was not read back")
            key = idempotency_key(
                run_id=self.run_id, proposal_id=made.proposal_id, args_hash=made.args_hash
            )
            if decision.idempotency_key != key:
                self.found.append(f"(c) {event.id} does not carry its proposal's key")
            if decision.outcome is Outcome.ALLOW:
                self.authorized.add(made.proposal_id)

    def check_commit(self, event: Event, started: CommitStarted, proposal_id: str) -> None:
        self.commits[started.attempt_id] = started
        made, made_seq = self.proposals[proposal_id]
        authorization = self.by_id[started.authorized_by or ""].payload
        assert isinstance(authorization, GateDecision)
        if authorization.outcome is Outcome.ALLOW:
            self.executed_keys.add(started.idempotency_key)
            if made.revision != self.revision:
                self.found.append(f"(a) {event.id} commits {proposal_id} of a stale revision")
        elif started.idempotency_key not in self.executed_keys:
            self.found.append(f"(a) {event.id} replays a key no allowed commit started")
        confirmation = self.by_id.get(started.confirmation_event_id or "")
        if not (
            confirmation is not None
            and isinstance(confirmation.payload, CallerUnderstood)
            and confirmation.payload.kind is UnderstandingKind.CONFIRM
            and made_seq < confirmation.seq < event.seq
        ):
            self.found.append(f"(b) {event.id} has no explicit confirmation after its proposal")
        else:
            self.bound[confirmation.id].add(proposal_id)
            if len(self.bound[confirmation.id]) > 1:
                self.found.append(f"(b) {event.id} reuses a confirmation of another proposal")
        if proposal_id in self.expired:
            self.found.append(f"(d) {event.id} commits expired proposal {proposal_id}")


def check(driver: Driver, events: list[Event]) -> None:
    found = Audit(events).found
    found += [
        f"(c) the tool ran {proposal_id} {count} times"
        for proposal_id, count in driver.executions.items()
        if count > 1
    ]
    assert not found, "\n".join(found)


# Every run opens with the caller's request; what follows is any interleaving at all.
steps = st.lists(
    st.tuples(st.sampled_from(STEPS), st.integers(0, 11), st.integers(0, 11)),
    min_size=20,
    max_size=60,
).map(lambda tail: [("request", 0, 0), *tail])


@settings(max_examples=300, deadline=None)
@given(steps=steps)
def test_every_interleaving_keeps_the_gate_invariants(steps: list[Step]) -> None:
    driver = Driver(GateState())
    events = driver.run(steps)
    check(driver, events)
    refolded = GateState.from_events(events)
    assert refolded.pending_proposal() == driver.gate.pending_proposal()
    assert refolded.current_revision == driver.gate.current_revision


class GateThatAllowsEverything(GateState):
    """A broken gate, to show that the invariants above can fail."""

    def decide(self, request: GateRequest) -> GateDecision:
        key = None
        if request.operation is Operation.COMMIT and request.proposal_id is not None:
            key = idempotency_key(
                run_id=self.run_id, proposal_id=request.proposal_id, args_hash=digest(request.args)
            )
        return GateDecision(
            request=request,
            outcome=Outcome.ALLOW,
            reason_kind="confirmed",
            reason="Anything goes.",
            rests_on=[],
            idempotency_key=key,
        )


GROUNDED = [("request", 1, 0), ("lookup", 1, 0), ("lookup_ends", 0, 0), ("propose", 0, 1)]


@pytest.mark.parametrize(
    ("script", "letter"),
    [
        ([*GROUNDED, ("confirm", 0, 0), ("request", 2, 0), ("commit", 0, 0)], "a"),
        ([*GROUNDED, ("positive", 0, 0), ("commit", 1, 0)], "b"),
        (GROUNDED + [("confirm", 0, 0), ("commit", 1, 0), ("commit_ends", 0, 0)] * 2, "c"),
        ([*GROUNDED, ("interrupt", 0, 0), ("confirm", 0, 0), ("commit", 0, 0)], "d"),
        ([("request", 1, 0)] + [("lookup", 1, 0), ("lookup_ends", 0, 4)] * 3, "e"),
        ([*GROUNDED[:3], ("propose", 0, 0)], "f"),
    ],
)
def test_the_invariants_catch_a_gate_that_allows_everything(
    script: list[Step], letter: str
) -> None:
    assert not Audit(Driver(GateState()).run(script)).found
    driver = Driver(GateThatAllowsEverything())
    with pytest.raises(AssertionError, match=rf"\({letter}\)"):
        check(driver, driver.run(script))
