"""The scripted agent's dialogue policy: it reacts to the run's events with steps to take.

Pure: no Django, no I/O, no clock. The agent only asks; in guarded runs the gate decides.
A naive agent (unguarded mode) differs in one habit of its own, inventing a slot after a
failed lookup; its other failures come from having no gate to stop it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lab.events.types import (
    Action,
    Args,
    CallerUnderstood,
    CommitFailed,
    CommitSucceeded,
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
    UnderstandingKind,
)

AGENT_VERSION = "scripted-agent-1"
REQUIRED_ARGS: dict[Action, tuple[str, ...]] = {
    Action.BOOK: ("day",),
    Action.REFUND: ("order_number", "amount_cents"),
}
# When the caller names a new day, an earlier part of day or clock time no longer applies.
DAY_DEPENDENT = ("part_of_day", "time")


@dataclass(frozen=True)
class Say:
    text: str
    purpose: str
    proposal_id: str | None = None


@dataclass(frozen=True)
class Revise:
    action: Action
    args: Args
    heard: dict[str, str]
    understood_event_id: str


@dataclass(frozen=True)
class Lookup:
    revision: int
    action: Action
    query: Args


@dataclass(frozen=True)
class Propose:
    revision: int
    action: Action
    args: Args
    grounded_on: str | None


@dataclass(frozen=True)
class Commit:
    proposal: ProposalMade | None
    confirmation_event_id: str


Step = Say | Revise | Lookup | Propose | Commit


def spoken_time(hhmm: str) -> str:
    hour, minute = int(hhmm[:2]), hhmm[3:]
    suffix = "AM" if hour < 12 else "PM"
    return f"{(hour - 1) % 12 + 1}:{minute} {suffix}"


def spoken_amount(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


def describe(action: Action, args: Args) -> str:
    if action is Action.REFUND:
        parts = []
        if "amount_cents" in args:
            parts.append(f"a refund of {spoken_amount(int(args['amount_cents']))}")
        if "order_number" in args:
            parts.append(f"on order {args['order_number']}")
        return " ".join(parts) or "a refund"
    words = [str(args.get("day", "")).capitalize(), str(args.get("part_of_day", ""))]
    if "time" in args:
        words.append(f"at {spoken_time(str(args['time']))}")
    return " ".join(w for w in words if w) or "an appointment"


def readback(proposal: ProposalMade) -> str:
    if proposal.action is Action.REFUND:
        return (
            f"I can refund {spoken_amount(int(proposal.args['amount_cents']))} "
            f"on order {proposal.args['order_number']}. Shall I go ahead?"
        )
    return (
        f"I have {str(proposal.args['day']).capitalize()} at "
        f"{spoken_time(str(proposal.args['time']))}. Shall I book it?"
    )


def invented_slot(args: Args) -> Args:
    """What a naive agent makes up when the calendar did not answer."""
    day = str(args.get("day", "monday"))
    time = "09:00" if args.get("part_of_day") == "morning" else "14:00"
    return {"slot_id": f"{day[:3]}-{time.replace(':', '')}", "day": day, "time": time}


@dataclass
class ScriptedAgent:
    naive: bool
    revision: int = 0
    action: Action | None = None
    args: Args = field(default_factory=dict)
    prepared: ProposalMade | None = None
    proposals: dict[str, ProposalMade] = field(default_factory=dict)
    attempts: dict[str, LookupStarted] = field(default_factory=dict)

    def greet(self) -> list[Step]:
        return [
            Say(
                "Hello, you've reached the booking and refunds line. How can I help?",
                "greeting",
            )
        ]

    def observe(self, event: Event) -> list[Step]:
        """The steps this event calls for (often none)."""
        match event.payload:
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
                # The agent keeps the call it prepared first until something tells it otherwise.
                if self.prepared is None:
                    self.prepared = proposal
                return [Say(readback(proposal), "readback", proposal.proposal_id)]
            case ProposalExpired(proposal_id=pid):
                if self.prepared is not None and self.prepared.proposal_id == pid:
                    self.prepared = None
            case GateDecision(outcome=Outcome.BLOCK) as decision:
                return [self._on_blocked(decision)]
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
            case CommitFailed(reason=reason):
                return [Say(f"That didn't go through: {reason}.", "failure")]
        return []

    def _on_understood(self, understood: CallerUnderstood, event_id: str) -> list[Step]:
        match understood.kind:
            case UnderstandingKind.REQUEST | UnderstandingKind.CORRECTION:
                return self._on_request(understood, event_id)
            case UnderstandingKind.CONFIRM | UnderstandingKind.POSITIVE:
                if self.naive and self.prepared is None:
                    return [Say("There's nothing waiting for your confirmation yet.", "clarify")]
                return [Commit(self.prepared, event_id)]
            case UnderstandingKind.DECLINE:
                return [Say("Okay, I won't go ahead with that.", "acknowledge")]
            case UnderstandingKind.UNSUPPORTED:
                return [
                    Say(
                        "Sorry, I can't help with that here. "
                        "I can book appointments and issue refunds.",
                        "refuse",
                    )
                ]
        return [Say("Sorry, I didn't catch that. Could you say it again?", "clarify")]

    def _on_request(self, understood: CallerUnderstood, event_id: str) -> list[Step]:
        action = understood.action or self.action
        if action is None:
            return [Say("Would you like to book an appointment or ask for a refund?", "clarify")]
        base = dict(self.args) if action is self.action else {}
        if "day" in understood.args:
            for key in DAY_DEPENDENT:
                base.pop(key, None)
        merged = {**base, **understood.args}
        if action is self.action and merged == self.args:
            return [Say(f"Yes, that's {describe(action, merged)}.", "acknowledge")]
        return [Revise(action, merged, dict(understood.heard), event_id)]

    def _on_revised(self, revised: IntentRevised) -> list[Step]:
        self.revision, self.action, self.args = revised.revision, revised.action, dict(revised.args)
        missing = [key for key in REQUIRED_ARGS[revised.action] if key not in revised.args]
        if missing:
            wanted = " and ".join(key.replace("_cents", "").replace("_", " ") for key in missing)
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
        if not result.options:
            return [Say(f"I have nothing for {describe(self.action, self.args)}.", "failure")]
        option = result.options[0]
        if self.action is Action.REFUND:
            ceiling = int(option["max_amount_cents"])
            if int(self.args["amount_cents"]) > ceiling:
                return [
                    Say(f"I can refund at most {spoken_amount(ceiling)} on that order.", "failure")
                ]
            args = {
                "order_number": option["order_number"],
                "amount_cents": self.args["amount_cents"],
            }
        else:
            args = dict(option)
        return [Propose(self.revision, self.action, args, event_id)]

    def _on_lookup_failed(self, failure: LookupFailed) -> list[Step]:
        started = self.attempts.get(failure.attempt_id)
        if started is None or started.revision != self.revision or self.action is None:
            return []
        if self.naive:
            return [Propose(self.revision, self.action, invented_slot(self.args), None)]
        if started.attempt == 1:
            return [
                Say("The system didn't answer in time. Let me try once more.", "failure"),
                Lookup(started.revision, started.action, started.query),
            ]
        return [Say("I couldn't get an answer, so I can't offer anything yet.", "failure")]

    def _on_blocked(self, decision: GateDecision) -> Say:
        if decision.request.operation is not Operation.COMMIT:
            return Say("I can't rely on that result, so I won't offer it.", "failure")
        match decision.reason_kind:
            case "not_explicit":
                return Say("I need a clear yes before I go ahead. Shall I?", "clarify")
            case "no_proposal":
                return Say("There's nothing waiting for your confirmation yet.", "clarify")
            case "stale_revision" | "proposal_expired":
                return Say("That request has changed, so I won't act on it.", "clarify")
        return Say(f"I can't go ahead: {decision.reason}", "clarify")
