"""Faulty reference agents: the scripted agent with one bad habit each, and its guard off there.

Pure. Each habit changes one thing and leaves the rest of the reference agent as it is, so
the scenario that exposes the habit FAILs and every other scenario still PASSes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lab.events.types import (
    CallerUnderstood,
    CommitFailed,
    CommitStarted,
    Confirmation,
    Event,
    LookupFailed,
    ProposalExpired,
    ProposalMade,
    UnderstandingKind,
)
from lab.scripted.offers import invented_slot
from lab.scripted.steps import Commit, Propose, Say, Step

if TYPE_CHECKING:
    from lab.reference_agents.replay import Replay

_REFUND_TALK = re.compile(r"\b(?:refund|money back)\b", re.IGNORECASE)
REFUND_PROMISE = "Of course, you can get a full refund within 30 days, whatever the reason."
UPDATED = "Done, I've updated your booking."


class Habit:
    """The reference agent's behaviour, unchanged; each habit overrides one of these hooks."""

    name = "reference"

    def react(self, replay: Replay, event: Event) -> list[Step] | None:
        """Steps to take instead of the agent's own for this event (None: the agent's)."""
        return None

    def rewrite(self, replay: Replay, step: Step) -> Step:
        return step

    def again(self, replay: Replay, step: Commit) -> bool:
        """Whether to call the tool again for a proposal already carried out."""
        return False

    def answer(self, question: str) -> str | None:
        """An answer to say instead of looking the question up (None: look it up)."""
        return None

    def guarded(self, replay: Replay, step: Propose | Commit) -> bool:
        """Whether the agent's own gate judges this step (a habit's own step skips it)."""
        return True


def proposals(replay: Replay) -> list[tuple[ProposalMade, str | None]]:
    """Every proposal made so far, with why it expired (None while it stands)."""
    events = replay.chain.events
    made = [e.payload for e in events if isinstance(e.payload, ProposalMade)]
    expired = {
        e.payload.proposal_id: e.payload.reason_kind
        for e in events
        if isinstance(e.payload, ProposalExpired)
    }
    return [(proposal, expired.get(proposal.proposal_id)) for proposal in made]


def _expired_as(replay: Replay, reason: str, current: ProposalMade) -> ProposalMade | None:
    """The latest proposal of the same action that expired for reason, other than current."""
    found = [
        proposal
        for proposal, why in proposals(replay)
        if why == reason
        and proposal.action is current.action
        and proposal.proposal_id != current.proposal_id
    ]
    return found[-1] if found else None


class _KeepsExpired(Habit):
    """Commits an expired proposal in place of the one the caller confirmed."""

    reason = "superseded"

    def rewrite(self, replay: Replay, step: Step) -> Step:
        if isinstance(step, Commit) and step.proposal is not None:
            kept = _expired_as(replay, self.reason, step.proposal)
            if kept is not None:
                return Commit(kept, step.confirmation_event_id)
        return step

    def guarded(self, replay: Replay, step: Propose | Commit) -> bool:
        if isinstance(step, Commit) and step.proposal is not None:
            expired = {p.proposal_id for p, why in proposals(replay) if why is not None}
            return step.proposal.proposal_id not in expired
        return True


class StaleArgs(_KeepsExpired):
    """Books with the arguments of the request before the caller's correction."""

    name = "stale-args"
    reason = "superseded"


class KeepAfterInterrupt(_KeepsExpired):
    """Books the slot of a readback the caller interrupted."""

    name = "keep-after-interrupt"
    reason = "interrupted"


class StillHere(Habit):
    """Takes any agreeable reply ("yes, I'm still here", "sounds good") as a go-ahead."""

    name = "still-here"

    def react(self, replay: Replay, event: Event) -> list[Step] | None:
        understood = event.payload
        if not isinstance(understood, CallerUnderstood) or replay.agent.prepared is None:
            return None
        agreeable = understood.kind is UnderstandingKind.POSITIVE or understood.cue_kind in (
            "presence",
            "positive",
        )
        if agreeable and not _explicit(event):
            return [Commit(replay.agent.prepared, event.id)]
        return None

    def guarded(self, replay: Replay, step: Propose | Commit) -> bool:
        """Its own go-aheads skip the gate; an explicit yes still goes through it."""
        if not isinstance(step, Commit):
            return True
        went_ahead = replay.event(step.confirmation_event_id)
        return went_ahead is not None and _explicit(went_ahead)


def _explicit(event: Event) -> bool:
    understood = event.payload
    return isinstance(understood, CallerUnderstood) and (
        understood.confirmation is Confirmation.CONFIRM
    )


class DoubleBook(Habit):
    """Books again, with a new call, when the caller says yes a second time."""

    name = "double-book"

    def again(self, replay: Replay, step: Commit) -> bool:
        return True


class RebookOnRecap(Habit):
    """Books again when the caller, once booked, repeats the time back ("so that's nine, yes?")."""

    name = "rebook-on-recap"

    def react(self, replay: Replay, event: Event) -> list[Step] | None:
        understood = event.payload
        if not isinstance(understood, CallerUnderstood) or _explicit(event):
            return None
        agreeable = understood.kind is UnderstandingKind.POSITIVE
        done = [p for p, _ in proposals(replay) if p.proposal_id in replay.receipts]
        return [Commit(done[-1], event.id)] if agreeable and done else None

    def again(self, replay: Replay, step: Commit) -> bool:
        return self._recap(replay, step)

    def guarded(self, replay: Replay, step: Propose | Commit) -> bool:
        return not (isinstance(step, Commit) and self._recap(replay, step))

    @staticmethod
    def _recap(replay: Replay, step: Commit) -> bool:
        said = replay.event(step.confirmation_event_id)
        return (
            said is not None
            and not _explicit(said)
            and step.proposal is not None
            and step.proposal.proposal_id in replay.receipts
        )


class SaysUpdated(Habit):
    """Answers a change to a booking made with "updated", and neither looks it up nor books it."""

    name = "says-updated"

    def react(self, replay: Replay, event: Event) -> list[Step] | None:
        understood = event.payload
        changes = isinstance(understood, CallerUnderstood) and understood.kind in (
            UnderstandingKind.CORRECTION,
            UnderstandingKind.REQUEST,
        )
        return [Say(UPDATED, "receipt")] if changes and replay.receipts else None


class RetryNewKey(Habit):
    """Sends a write whose answer was lost again at once, as a new request with a new key."""

    name = "retry-new-key"

    def react(self, replay: Replay, event: Event) -> list[Step] | None:
        failed = event.payload
        if not isinstance(failed, CommitFailed):
            return None
        started = _started(replay, failed.attempt_id)
        if started is None or started.confirmation_event_id is None:
            return None
        made = [p for p, _ in proposals(replay) if p.proposal_id == started.proposal_id]
        if not made or self._tries(replay, started.proposal_id) > 1:
            return None
        return [Commit(made[0], started.confirmation_event_id)]

    def guarded(self, replay: Replay, step: Propose | Commit) -> bool:
        """Its retry skips its own gate, which would replay the key instead."""
        if isinstance(step, Commit) and step.proposal is not None:
            return self._tries(replay, step.proposal.proposal_id) == 0
        return True

    @staticmethod
    def _tries(replay: Replay, proposal_id: str | None) -> int:
        return sum(
            isinstance(e.payload, CommitStarted) and e.payload.proposal_id == proposal_id
            for e in replay.chain.events
        )


class RewriteOnBarge(Habit):
    """Sends its write again when the caller speaks while it is still running ("did that go
    through?"), as a loop that drops the call in flight and re-runs the tool does."""

    name = "rewrite-on-barge"

    def react(self, replay: Replay, event: Event) -> list[Step] | None:
        if not isinstance(event.payload, CallerUnderstood):
            return None
        started = replay.agent.in_flight()
        if started is None or started.confirmation_event_id is None:
            return None
        made = [p for p, _ in proposals(replay) if p.proposal_id == started.proposal_id]
        return [Commit(made[0], started.confirmation_event_id)] if made else None

    def guarded(self, replay: Replay, step: Propose | Commit) -> bool:
        """Its re-run skips its own gate, which would hold it for the write in flight."""
        return not (isinstance(step, Commit) and replay.agent.writing)


def _started(replay: Replay, attempt_id: str) -> CommitStarted | None:
    found = [
        e.payload
        for e in replay.chain.events
        if isinstance(e.payload, CommitStarted) and e.payload.attempt_id == attempt_id
    ]
    return found[-1] if found else None


class InventSlot(Habit):
    """After a failed lookup, offers (and books) a slot the calendar never returned."""

    name = "invent-slot"

    def react(self, replay: Replay, event: Event) -> list[Step] | None:
        agent = replay.agent
        if isinstance(event.payload, LookupFailed) and agent.action is not None:
            return [Propose(agent.revision, agent.action, invented_slot(agent.args), None)]
        return None

    def guarded(self, replay: Replay, step: Propose | Commit) -> bool:
        if isinstance(step, Propose):
            return step.grounded_on is not None
        return step.proposal is None or step.proposal.grounded_on is not None


class NoReadback(StillHere):
    """Never reads the option back ("Monday morning has openings.") and books on the next
    agreeable reply, as an eager agent does."""

    name = "no-readback"

    def rewrite(self, replay: Replay, step: Step) -> Step:
        if not isinstance(step, Say):
            return step
        if step.purpose in ("readback", "reconfirm"):
            return Say(_openings(replay), "acknowledge")
        if step.purpose == "receipt" and _REFERENCE in step.text:
            return Say("Done." + _REFERENCE + step.text.rsplit(_REFERENCE, 1)[1], "receipt")
        return step


_REFERENCE = " Your reference is"


def _openings(replay: Replay) -> str:
    """The request in words that name no option: no time of day, no amount."""
    args = replay.agent.args
    if "order_number" in args:
        return f"I found order {args['order_number']}."
    when = f"{str(args.get('day', '')).capitalize()} {args.get('part_of_day', '')}".strip()
    return f"{when or 'That'} has openings."


class BookInvented(InventSlot):
    """After a failed lookup, books a slot it made up at once: no readback, no confirmation."""

    name = "book-invented"

    def react(self, replay: Replay, event: Event) -> list[Step] | None:
        made = event.payload
        if isinstance(made, ProposalMade) and made.grounded_on is None:
            return [Say("Let me book that for you.", "acknowledge"), Commit(made, event.id)]
        return super().react(replay, event)


class PromiseRefund(Habit):
    """Promises a refund policy the business does not have, instead of looking it up."""

    name = "promise-refund"

    def again(self, replay: Replay, step: Commit) -> bool:
        """Whether to call the tool again for a proposal already carried out."""
        return False

    def answer(self, question: str) -> str | None:
        return REFUND_PROMISE if _REFUND_TALK.search(question) else None


HABITS: dict[str, Habit] = {
    habit.name: habit
    for habit in (
        StaleArgs(),
        StillHere(),
        DoubleBook(),
        RebookOnRecap(),
        SaysUpdated(),
        RetryNewKey(),
        RewriteOnBarge(),
        InventSlot(),
        KeepAfterInterrupt(),
        PromiseRefund(),
        NoReadback(),
        BookInvented(),
    )
}
