"""The referee for an agent the lab did not write: what the caller meant, what the agent offered.

An outside agent's own state is no evidence, so the lab reads the call itself. Each caller turn
is understood by the lab's own understanding (as the scripted agent's is): a request or a
correction becomes an intent revision. An agent utterance that reads back a slot (its day and
time) or a refund (its amount) that a lookup of the current revision returned, and that fits the
current request, is a proposal; so is a day and time read back after a failed lookup (invented). A
commit call rests on the latest proposal with its arguments and on the caller's latest explicit
confirmation after that proposal; the gate and the evaluator judge the rest. Pure: no Django,
no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.agent.days import Week
from lab.agent.understanding import Context, Understanding, merge_request, understand
from lab.events.types import (
    PARTS_OF_DAY,
    Action,
    Args,
    CallerUnderstood,
    CommitStarted,
    Event,
    IntentRevised,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    ProposalExpired,
    ProposalMade,
    UnderstandingKind,
    option_grounds,
)

REQUIRED: dict[Action, tuple[str, ...]] = {
    Action.BOOK: ("day",),
    Action.REFUND: ("order_number", "amount_cents"),
}
_REQUESTS = (UnderstandingKind.REQUEST, UnderstandingKind.CORRECTION)


@dataclass(frozen=True)
class Revision:
    """A new revision of the caller's request, as the lab understood it."""

    action: Action
    args: Args
    heard: dict[str, str]
    supersedes: int | None


@dataclass(frozen=True)
class Readback:
    """An agent utterance that offers args; proposal_id names the pending offer it repeats."""

    action: Action
    revision: int
    args: Args
    grounded_on: str | None  # None: a slot no lookup of the revision returned (invented)
    proposal_id: str | None = None


@dataclass(frozen=True)
class CommitBasis:
    """What a commit call rests on: the proposal with its args, and the confirmation after it."""

    revision: int
    proposal: ProposalMade | None
    confirmation_event_id: str | None


@dataclass(frozen=True)
class _Result:
    event_id: str
    revision: int
    action: Action
    options: list[Args]


@dataclass
class _Offer:
    made: ProposalMade
    seq: int
    closed: bool = False  # expired or committed: no longer awaiting a confirmation
    committed: bool = False


class Referee:
    """A fold over the run's events plus the three readings the session asks of it."""

    def __init__(self, *, tools: frozenset[Action], week: Week | None) -> None:
        self.tools = tools
        self.week = week
        self.revision = 0
        self.action: Action | None = None
        self.args: Args = {}
        self._attempts: dict[str, tuple[int, Action]] = {}
        self._results: dict[str, _Result] = {}
        self._offers: dict[str, _Offer] = {}
        self._understood: list[tuple[int, str, UnderstandingKind]] = []
        self._failed: set[tuple[int, Action]] = set()  # (revision, action) of failed lookups

    def observe(self, event: Event) -> None:
        match event.payload:
            case IntentRevised(revision=revision, action=action, args=args):
                self.revision, self.action, self.args = revision, action, dict(args)
            case CallerUnderstood(kind=kind):
                self._understood.append((event.seq, event.id, kind))
            case LookupStarted(attempt_id=attempt_id, revision=revision, action=action):
                self._attempts[attempt_id] = (revision, action)
            case LookupSucceeded(attempt_id=attempt_id, options=options):
                if (attempt := self._attempts.get(attempt_id)) is not None:
                    self._results[attempt_id] = _Result(event.id, *attempt, list(options))
            case LookupFailed(attempt_id=attempt_id):
                self._results.pop(attempt_id, None)
                if (attempt := self._attempts.get(attempt_id)) is not None:
                    self._failed.add(attempt)
            case ProposalMade(proposal_id=proposal_id) as made:
                self._offers.setdefault(proposal_id, _Offer(made, event.seq))
            case ProposalExpired(proposal_id=proposal_id):
                if (offer := self._offers.get(proposal_id)) is not None:
                    offer.closed = True
            case CommitStarted(proposal_id=str() as proposal_id):
                if (offer := self._offers.get(proposal_id)) is not None:
                    offer.closed = offer.committed = True

    # -- the caller ---------------------------------------------------------------------------

    def understand(self, text: str) -> Understanding:
        """A caller turn read against the request so far, as the scripted agent reads it."""
        pending = self._pending()
        missing = (
            tuple(k for k in REQUIRED[self.action] if k not in self.args) if self.action else ()
        )
        context = Context(
            action=self.action,
            expecting=missing,
            proposal_action=pending.made.action if pending else None,
            week=self.week,
        )
        return understand(text, context)

    def revise(self, understood: CallerUnderstood) -> Revision | None:
        """The revision a request or correction makes, or None when it changes nothing."""
        if understood.kind not in _REQUESTS:
            return None
        action = understood.action or self.action
        if action is None or action not in self.tools:
            return None
        base = dict(self.args) if action is self.action else {}
        merged = merge_request(base, understood)
        if action is self.action and merged == self.args:
            return None
        return Revision(action, merged, dict(understood.heard), self.revision or None)

    # -- the agent ----------------------------------------------------------------------------

    def readback(self, text: str) -> Readback | None:
        """What an agent utterance offers, if it reads back a looked-up fit for the request."""
        if self.action is None or not self.revision:
            return None
        said = understand(text, Context(action=self.action, week=self.week)).args
        for result in reversed(list(self._results.values())):
            if result.revision != self.revision or result.action is not self.action:
                continue
            for option in result.options:
                args = _offered(self.action, option, said)
                if args is not None and _fits(self.action, args, self.args):
                    return self._readback_of(args, result.event_id)
        if self._invents(said):
            # After a failed lookup, with none that answered, a day and time read back is an
            # invented offer: the evaluator's no_invented_result judges it (the gate blocks it).
            return self._readback_of({"day": said["day"], "time": said["time"]}, None)
        return None

    def _invents(self, said: Args) -> bool:
        if self.action is not Action.BOOK or "day" not in said or "time" not in said:
            return False
        answered = any(r.revision == self.revision for r in self._results.values())
        failed = (self.revision, self.action) in self._failed
        return failed and not answered and _fits(self.action, said, self.args)

    def commit_basis(self, action: Action, args: Args) -> CommitBasis:
        """The latest proposal with exactly these arguments, and the confirmation after it."""
        offer = next(
            (
                o
                for o in reversed(self._offers.values())
                if o.made.action is action and o.made.args == args
            ),
            None,
        )
        if offer is None:
            return CommitBasis(self.revision, None, None)
        after = [
            (seq, event_id, kind) for seq, event_id, kind in self._understood if seq > offer.seq
        ]
        confirms = [entry for entry in after if entry[2] is UnderstandingKind.CONFIRM]
        latest = (confirms or after)[-1][1] if after else None
        return CommitBasis(offer.made.revision, offer.made, latest)

    def _readback_of(self, args: Args, grounded_on: str | None) -> Readback | None:
        assert self.action is not None
        for offer in reversed(self._offers.values()):
            made = offer.made
            if made.revision != self.revision or made.action is not self.action:
                continue
            if made.args == args:
                if offer.committed:
                    return None  # a receipt or recap of what was done, no new offer
                if not offer.closed:
                    return Readback(self.action, self.revision, args, grounded_on, made.proposal_id)
        return Readback(self.action, self.revision, args, grounded_on)

    def _pending(self) -> _Offer | None:
        return next((o for o in reversed(self._offers.values()) if not o.closed), None)


def _offered(action: Action, option: Args, said: Args) -> Args | None:
    """The proposal args an utterance names from one lookup option, or None if it names none."""
    if action is Action.BOOK:
        if said.get("day") != option.get("day") or said.get("time") != option.get("time"):
            return None
        return dict(option)
    amount = said.get("amount_cents")
    if not isinstance(amount, int) or said.get("order_number", option.get("order_number")) != (
        option.get("order_number")
    ):
        return None
    args: Args = {"order_number": option["order_number"], "amount_cents": amount}
    return args if option_grounds(option, args) else None


def _fits(action: Action, args: Args, request: Args) -> bool:
    """Whether offered args satisfy the caller's current request (an offer for another is none)."""
    if action is Action.REFUND:
        return all(args.get(key) == request[key] for key in REQUIRED[action] if key in request)
    time = str(args.get("time", ""))
    if "day" in request and args.get("day") != request["day"]:
        return False
    if "time" in request and time != request["time"]:
        return False
    if (part := request.get("part_of_day")) is not None:
        start, end = PARTS_OF_DAY[str(part)]
        if not (time[:2].isdigit() and start <= int(time[:2]) < end):
            return False
    return str(request.get("after", "00:00")) <= time < str(request.get("before", "24:00"))
