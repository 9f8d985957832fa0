"""The scripted agent's dialogue policy: it reacts to the run's events with steps to take.

Pure: no Django, no I/O, no clock. The agent only asks; in guarded runs the gate decides.
A naive agent (unguarded mode) differs in habits of its own: it takes any agreeable reply
as a go-ahead and invents a slot after a failed lookup; its other failures come from having
no gate to stop it. An ungrounded agent (ungrounded mode) answers questions without retrieving,
filling in what it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lab.events.types import (
    Action,
    Args,
    CallerUnderstood,
    CallerUtterance,
    CommitFailed,
    CommitReconciled,
    CommitStarted,
    CommitSucceeded,
    CommitUncertain,
    Confirmation,
    Event,
    GateDecision,
    IntentRevised,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Operation,
    Outcome,
    ProposalExpired,
    ProposalMade,
    Receipt,
    RetrievalDone,
    UnderstandingKind,
)
from lab.language.days import Week
from lab.language.understanding import Context, Understanding, merge_request, understand
from lab.scripted import wording
from lab.scripted.answers import (
    Retrieve,
    grounded_answer,
    retrieval_query,
    ungrounded_answer,
    wants_retrieval,
)
from lab.scripted.offers import choose, invented, refund_offer
from lab.scripted.steps import Commit, Lookup, Propose, Revise, Say, Step
from lab.scripted.wording import describe, readback, reconfirm

AGENT_VERSION = "scripted-agent-2"
REQUIRED_ARGS: dict[Action, tuple[str, ...]] = {
    Action.BOOK: ("day",),
    Action.REFUND: ("order_number", "amount_cents"),
}
BOTH_TOOLS = frozenset(Action)
_KEY_NAMES = {"order_number": "order number", "amount_cents": "amount", "day": "day"}


@dataclass
class ScriptedAgent:
    naive: bool
    tools: frozenset[Action] = BOTH_TOOLS
    week: Week | None = None
    ungrounded: bool = False
    revision: int = 0
    action: Action | None = None
    args: Args = field(default_factory=dict)
    prepared: ProposalMade | None = None
    proposals: dict[str, ProposalMade] = field(default_factory=dict)
    expired: dict[str, str] = field(default_factory=dict)
    attempts: dict[str, LookupStarted] = field(default_factory=dict)
    expecting: tuple[str, ...] = ()
    unsure: dict[str, str] = field(default_factory=dict)
    heard: str = ""
    # What the caller's last turn asked about the business ("" after any other turn).
    asked: str = ""
    # Each commit attempt the agent made, by attempt id, and how often each proposal was tried.
    commits: dict[str, CommitStarted] = field(default_factory=dict)
    tries: dict[str, int] = field(default_factory=dict)
    # Commit attempts started whose outcome has not come yet.
    writing: set[str] = field(default_factory=set)

    def greet(self) -> list[Step]:
        return [
            Say(
                "Hello, you've reached the booking and refunds line. How can I help?",
                "greeting",
            )
        ]

    def farewell(self) -> list[Step]:
        """What the agent says when the lab closes a call that has gone quiet."""
        return [Say("It sounds like we're done, so I'll end the call here. Goodbye.", "goodbye")]

    def understand(self, text: str) -> Understanding:
        """What a caller turn says, read against what the call is about so far."""
        context = Context(
            action=self.action,
            expecting=self.expecting,
            proposal_action=self.prepared.action if self.prepared else None,
            week=self.week,
            after_question=bool(self.asked),
            current=self.args,
        )
        return understand(text, context)

    def observe(self, event: Event) -> list[Step]:
        """The steps this event calls for (often none)."""
        match event.payload:
            case CommitStarted(attempt_id=attempt_id):
                self.writing.add(attempt_id)
            case CommitSucceeded(attempt_id=attempt_id) | CommitFailed(attempt_id=attempt_id):
                self.writing.discard(attempt_id)
            case CommitReconciled(attempt_id=attempt_id):
                self.writing.discard(attempt_id)
        match event.payload:
            case CallerUtterance(text=text):
                self.heard = text
            case RetrievalDone() as retrieval:
                return [Say(grounded_answer(retrieval), "answer", retrieval_event_id=event.id)]
            case CallerUnderstood() as understood:
                return self._on_understood(understood, event.id)
            case IntentRevised() as revised:
                return self._on_revised(revised)
            case LookupStarted() as started:
                self.attempts[started.attempt_id] = started
            case LookupSucceeded() as result:
                return self._on_lookup(result, event.id)
            case LookupFailed() as failure:
                return self._on_lookup_failed(failure)
            case ProposalMade() as proposal:
                self.proposals[proposal.proposal_id] = proposal
                # The agent keeps the call it prepared first until something tells it otherwise:
                # an expiry, or (guarded) an offer for a newer request, after a commit too.
                newer = self.prepared is not None and proposal.revision > self.prepared.revision
                if self.prepared is None or (newer and not self.naive):
                    self.prepared = proposal
                return [Say(readback(proposal), "readback", proposal.proposal_id)]
            case ProposalExpired(proposal_id=pid, reason_kind=reason_kind):
                self.expired[pid] = reason_kind
                if self.prepared is not None and self.prepared.proposal_id == pid:
                    self.prepared = None
            case GateDecision(outcome=Outcome.BLOCK) as decision:
                return self._on_blocked(decision)
            case CommitSucceeded(receipt=receipt, replayed=replayed):
                what, ref = describe(receipt.action, receipt.args), receipt.receipt_id
                if replayed:
                    return [
                        Say(
                            f"That's already done: {what}. Your reference is still {ref}.",
                            "receipt",
                        )
                    ]
                return [Say(f"Done: {what}. Your reference is {ref}.", "receipt")]
            case CommitStarted() as started:
                self.commits[started.attempt_id] = started
                if started.proposal_id is not None:
                    self.tries[started.proposal_id] = self.tries.get(started.proposal_id, 0) + 1
            case CommitFailed(failure_kind="timeout", attempt_id=attempt_id):
                return self._on_commit_lost(attempt_id)
            case CommitFailed(reason=reason):
                return [Say(f"That didn't go through: {reason}.", "failure")]
            case CommitUncertain():
                return [Say("That's taking longer than usual; let me check.", "acknowledge")]
            case CommitReconciled(receipt=None):
                return [Say("I've checked: it did not go through, so nothing was done.", "failure")]
            case CommitReconciled(receipt=Receipt() as receipt):
                what, ref = describe(receipt.action, receipt.args), receipt.receipt_id
                return [
                    Say(
                        f"I've checked, and it went through. Done: {what}. "
                        f"Your reference is {ref}.",
                        "receipt",
                    )
                ]
        return []

    def _on_commit_lost(self, attempt_id: str) -> list[Step]:
        """A write whose answer never came may have run: try it once more, as a network client
        retries (guarded, the gate replays its key; a naive agent keys the retry anew)."""
        started = self.commits.get(attempt_id)
        proposal = self.proposals.get(started.proposal_id or "") if started else None
        if started is None or proposal is None or started.confirmation_event_id is None:
            return [Say(wording.COMMIT_UNKNOWN, "failure")]
        tried = self.tries.get(proposal.proposal_id, 0)
        if tried > 1:
            return [Say(wording.COMMIT_UNKNOWN, "failure")]
        return [
            Say(wording.COMMIT_RETRY, "acknowledge"),
            Commit(proposal, started.confirmation_event_id, retry=tried),
        ]

    def in_flight(self) -> CommitStarted | None:
        """The latest commit attempt whose outcome has not come yet."""
        started = [c for attempt, c in self.commits.items() if attempt in self.writing]
        return started[-1] if started else None

    def _write_again(self) -> list[Step]:
        started = self.in_flight()
        if started is None:
            return []
        proposal = self.proposals.get(started.proposal_id or "")
        if proposal is None or started.confirmation_event_id is None:
            return []
        tried = self.tries.get(proposal.proposal_id, 0)
        return [Commit(proposal, started.confirmation_event_id, retry=tried)]

    # -- caller turns -----------------------------------------------------------------------

    def _on_understood(self, understood: CallerUnderstood, event_id: str) -> list[Step]:
        changes = (UnderstandingKind.REQUEST, UnderstandingKind.CORRECTION)
        if self.writing and understood.kind not in changes:
            # Heard while a write is in flight ("did that go through?"): its outcome, said as it
            # comes, is the answer; the naive habit runs the write again, as a new request.
            return self._write_again() if self.naive else []
        self.expecting = ()
        self.unsure = dict(understood.ambiguous)
        asked, self.asked = self.asked, ""
        if wants_retrieval(understood, self.heard):
            self.asked = retrieval_query(self.heard, asked)
            if self.ungrounded:
                return [Say(ungrounded_answer(self.heard, event_id), "answer")]
            return [Retrieve(self.asked, event_id)]
        match understood.kind:
            case UnderstandingKind.REQUEST | UnderstandingKind.CORRECTION:
                return self._on_request(understood, event_id)
            case UnderstandingKind.CONFIRM if not self.naive:
                return self._on_confirm(event_id)
            case UnderstandingKind.CONFIRM | UnderstandingKind.POSITIVE if self.naive:
                # The naive habit: anything agreeable is a go-ahead.
                if self.prepared is None:
                    return [Say(wording.NOTHING_WAITING, "clarify")]
                return [Commit(self.prepared, event_id)]
            case UnderstandingKind.DECLINE:
                return [Say("Okay, I won't go ahead with that.", "acknowledge")]
            case UnderstandingKind.QUESTION:
                return [self._answer(understood)]
            case UnderstandingKind.UNSUPPORTED:
                return [Say(wording.SCOPE, "refuse")]
        return self._on_unsettled(understood)

    def _on_confirm(self, event_id: str) -> list[Step]:
        if self.prepared is not None:
            return [Commit(self.prepared, event_id)]
        # Confirmed just as an interruption expired the offer: the gate says so, then re-offer.
        return [Commit(self._interrupted_offer(), event_id)]

    def _on_unsettled(self, understood: CallerUnderstood) -> list[Step]:
        """A reply that is no clear yes or no: ask again with the readback, or re-offer."""
        if self.prepared is not None and not self.naive:
            opening = (
                "Yes, I'm here. Just to be sure:"
                if understood.cue_kind == "presence"
                else "Just to be sure:"
            )
            return [
                Say(
                    reconfirm(self.prepared, opening=opening),
                    "reconfirm",
                    self.prepared.proposal_id,
                )
            ]
        offer = None if self.naive else self._interrupted_offer()
        if offer is not None and understood.confirmation is not Confirmation.NOT_CONFIRM:
            return [self._reoffer(offer)]
        if understood.cue_kind == "presence":
            return [Say("Yes, I'm here. How can I help?", "clarify")]
        if understood.kind is UnderstandingKind.POSITIVE and not self.naive:
            return [Say(f"How can I help? {wording.CAPABILITIES}", "clarify")]
        return [Say(wording.NOT_CAUGHT, "clarify")]

    def _answer(self, understood: CallerUnderstood) -> Say:
        match understood.cue_kind:
            case "identity":
                return Say(wording.IDENTITY, "answer")
            case "capabilities":
                return Say(wording.CAPABILITIES, "answer")
        return Say(wording.NO_FACTS, "answer")

    def _on_request(self, understood: CallerUnderstood, event_id: str) -> list[Step]:
        action = understood.action or self.action
        if action is None:
            return [Say(wording.WHICH_ACTION, "clarify")]
        if action not in self.tools:
            return [Say(wording.not_offered(action, self.tools), "refuse")]
        base = dict(self.args) if action is self.action else {}
        merged = merge_request(base, understood)
        if action is self.action and merged == self.args:
            if understood.ambiguous:
                return [Say(self._ask_again(next(iter(understood.ambiguous))), "clarify")]
            if self.prepared is not None and not self.naive:
                return [Say(reconfirm(self.prepared), "reconfirm", self.prepared.proposal_id)]
            if not self.naive and (offer := self._interrupted_offer()) is not None:
                return [self._reoffer(offer)]
            return [Say(f"Yes, that's {describe(action, merged)}.", "acknowledge")]
        return [Revise(action, merged, dict(understood.heard), event_id)]

    def _ask_again(self, key: str) -> str:
        if key == "day":
            span = f"I can book {self.week.span()}. " if self.week else ""
            return f"I'm not sure which day you mean. {span}Which day would you like?"
        heard = self.unsure.get(key, "")
        again = (
            "in dollars and cents, like twelve dollars and fifty cents?"
            if key == "amount_cents"
            else "digit by digit?"
        )
        return (
            f'I heard the {_KEY_NAMES.get(key, key)} as "{heard}", which could be read more '
            f"than one way. Could you say it again, {again}"
        )

    # -- the agent's own work ---------------------------------------------------------------

    def _on_revised(self, revised: IntentRevised) -> list[Step]:
        self.revision, self.action, self.args = revised.revision, revised.action, dict(revised.args)
        missing = tuple(key for key in REQUIRED_ARGS[revised.action] if key not in revised.args)
        if missing:
            self.expecting = missing
            unsure = next((key for key in missing if key in self.unsure), None)
            if unsure is not None:
                return [Say(self._ask_again(unsure), "clarify")]
            wanted = " and ".join(_KEY_NAMES[key] for key in missing)
            return [Say(f"Could you tell me the {wanted}?", "clarify")]
        opening = "Got it, let me check" if revised.supersedes else "Let me check"
        return [
            Say(f"{opening} {describe(revised.action, revised.args)}.", "lookup"),
            Lookup(revised.revision, revised.action, self._query(revised)),
        ]

    @staticmethod
    def _query(revised: IntentRevised) -> Args:
        if revised.action is Action.REFUND:
            return {"order_number": revised.args["order_number"]}
        return {k: v for k, v in revised.args.items() if k in ("day", "part_of_day", "time")}

    def _on_lookup(self, result: LookupSucceeded, event_id: str) -> list[Step]:
        started = self.attempts.get(result.attempt_id)
        if started is None or started.revision != self.revision or self.action is None:
            return []
        if self.action is Action.REFUND:
            offer, refusal = refund_offer(result.options, self.args)
        else:
            offer, refusal = choose(result.options, self.args), None
        if offer is None:
            refusal = refusal or f"I have nothing for {describe(self.action, self.args)}."
            return [Say(refusal, "failure")]
        return [Propose(self.revision, self.action, dict(offer), event_id)]

    def _on_lookup_failed(self, failure: LookupFailed) -> list[Step]:
        started = self.attempts.get(failure.attempt_id)
        if started is None or started.revision != self.revision or self.action is None:
            return []
        if self.naive:
            return [Propose(self.revision, self.action, invented(self.action, self.args), None)]
        if started.attempt == 1:
            return [
                Say("The system didn't answer in time. Let me try once more.", "failure"),
                Lookup(started.revision, started.action, started.query),
            ]
        return [Say("I couldn't get an answer, so I can't offer anything yet.", "failure")]

    def _interrupted_offer(self) -> ProposalMade | None:
        """The latest proposal of the current request, if an interruption (only) expired it."""
        current = [p for p in self.proposals.values() if p.revision == self.revision]
        if current and self.expired.get(current[-1].proposal_id) == "interrupted":
            return current[-1]
        return None

    def _reoffer(self, proposal: ProposalMade) -> Propose:
        return Propose(
            proposal.revision, proposal.action, dict(proposal.args), proposal.grounded_on
        )

    def _on_blocked(self, decision: GateDecision) -> list[Step]:
        if decision.request.operation is not Operation.COMMIT:
            return [Say("I can't rely on that result, so I won't offer it.", "failure")]
        match decision.reason_kind:
            case "not_explicit":
                return [Say("I need a clear yes before I go ahead. Shall I?", "clarify")]
            case "proposal_expired" if (offer := self._interrupted_offer()) is not None:
                return [
                    Say("Sorry, you cut in before I finished. Here it is again.", "clarify"),
                    self._reoffer(offer),
                ]
            case "no_proposal" | "proposal_expired" if self.prepared is None:
                return [Say(wording.NOTHING_WAITING, "clarify")]
            case "stale_revision" | "proposal_expired":
                return [Say("That request has changed, so I won't act on it.", "clarify")]
        return [Say(f"I can't go ahead: {decision.reason}", "clarify")]
