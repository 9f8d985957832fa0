"""The referee for an agent the lab did not write: what the caller meant, what the agent offered.

An outside agent's own state is no evidence, so the lab reads the call itself. A scripted caller
line is read as its contract says it is meant (lab/referee/meant.py); any other caller turn (a
free call, a person typing) by the lab's own understanding, as the scripted agent reads it. A
request or a correction becomes an intent revision. An agent utterance that reads back a slot
(its day and time) or a refund (its amount) that fits the current request is a proposal:
grounded on the lookup of the current revision that returned it, or on nothing when the agent
offers what no lookup returned (after one answered or failed, as a naive agent invents a slot).
A commit call rests on the latest proposal with its arguments and on the caller's latest explicit
confirmation after that proposal; the gate and the evaluator judge the rest. Pure: no Django, no
I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from lab.events.actions import LAB_ACTIONS, Shape, shape_of
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
from lab.language.days import Week
from lab.language.understanding import Context, Understanding, merge_request, understand
from lab.referee.meant import as_meant
from lab.scenarios.meaning import CallerMeaning

_REQUESTS = (UnderstandingKind.REQUEST, UnderstandingKind.CORRECTION)
# An offer the lookups do not back is counted only when it is worded as one: "I have Wednesday
# at 2 PM, shall I book it?" is invented; "I have nothing for Wednesday at 2 PM" is honest.
_OFFER = re.compile(r"\?|\b(?:i have|i've got|i can|how about|there is|there's|we have)\b")
_DECLINE = re.compile(
    r"\b(?:nothing|no|not|none|unavailable|taken|full|booked up|sorry|unfortunately)\b|n't\b"
)


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
    grounded_on: str | None
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

    def __init__(
        self,
        *,
        tools: frozenset[Action],
        week: Week | None,
        shapes: Mapping[Action, Shape] | None = None,
    ) -> None:
        self.tools = tools
        self.week = week
        # The shapes of the actions a tools file declares beyond the lab's own.
        self.shapes = dict(shapes or {})
        self.revision = 0
        self.action: Action | None = None
        self.args: Args = {}
        self._attempts: dict[str, tuple[int, Action]] = {}
        self._results: dict[str, _Result] = {}
        # Revisions with a lookup that has answered or failed: talk of a slot after it is an offer.
        self._looked_up: set[int] = set()
        self._offers: dict[str, _Offer] = {}
        self._understood: list[tuple[int, str, UnderstandingKind]] = []

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
                    self._looked_up.add(attempt[0])
            case LookupFailed(attempt_id=attempt_id):
                self._results.pop(attempt_id, None)
                if (attempt := self._attempts.get(attempt_id)) is not None:
                    self._looked_up.add(attempt[0])
            case ProposalMade(proposal_id=proposal_id) as made:
                self._offers.setdefault(proposal_id, _Offer(made, event.seq))
            case ProposalExpired(proposal_id=proposal_id):
                if (offer := self._offers.get(proposal_id)) is not None:
                    offer.closed = True
            case CommitStarted(proposal_id=str() as proposal_id):
                if (offer := self._offers.get(proposal_id)) is not None:
                    offer.closed = offer.committed = True

    # -- the caller ---------------------------------------------------------------------------

    def understand(self, text: str, meant: CallerMeaning | None = None) -> Understanding:
        """A caller turn read against the request so far, as the scripted agent reads it, or
        as its scripted line is meant when the contract says so."""
        pending = self._pending()
        missing = (
            tuple(k for k in self._shape(self.action).required if k not in self.args)
            if self.action
            else ()
        )
        context = Context(
            action=self.action,
            expecting=missing,
            proposal_action=pending.made.action if pending else None,
            week=self.week,
            current=self.args,
        )
        read = understand(text, context)
        return as_meant(meant, read) if meant is not None else read

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
        """What an agent utterance offers: a looked-up fit for the request, or (once a lookup of
        this revision has answered or failed) a slot or amount no lookup returned, ungrounded."""
        if self.action is None or not self.revision:
            return None
        shape = self._shape(self.action)
        said = understand(text, Context(action=_worded(shape), week=self.week)).args
        for result in reversed(list(self._results.values())):
            if result.revision != self.revision or result.action is not self.action:
                continue
            for option in result.options:
                args = _offered(shape, option, said)
                if args is not None and _fits(shape, args, self.args):
                    return self._readback_of(args, result.event_id)
        # Before any answer, naming a time is "let me check"; after one, it is an invented offer.
        offering = self.revision in self._looked_up and _offers(text)
        invented = _named(shape, said, self.args) if offering else None
        if invented is not None and _fits(shape, invented, self.args):
            return self._readback_of(invented, None)
        return None

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

    def _shape(self, action: Action) -> Shape:
        return shape_of(action, self.shapes)

    def _pending(self) -> _Offer | None:
        return next((o for o in reversed(self._offers.values()) if not o.closed), None)


def _worded(shape: Shape) -> Action:
    """The lab action whose words read this shape's readbacks (a day and time; an amount)."""
    return next(action for action, lab in LAB_ACTIONS.items() if lab is shape)


def _offered(shape: Shape, option: Args, said: Args) -> Args | None:
    """The proposal args an utterance names from one lookup option, or None if it names none."""
    if any(said.get(key) != option.get(key) for key in shape.matched):
        return None
    if any(said.get(key, option.get(key)) != option.get(key) for key in shape.implied):
        return None
    if shape.capped is None:
        return dict(option)
    amount = said.get(shape.capped)
    if not isinstance(amount, int):
        return None
    args: Args = {**{key: option[key] for key in shape.implied}, shape.capped: amount}
    return args if option_grounds(option, args) else None


def _offers(text: str) -> bool:
    """Whether words that name no looked-up slot still offer one ("I have…?"), not decline it."""
    lowered = text.lower()
    return bool(_OFFER.search(lowered)) and not _DECLINE.search(lowered)


def _named(shape: Shape, said: Args, request: Args) -> Args | None:
    """The whole offer an utterance names on its own (a day and a time; an amount), or None."""
    named = {key: said[key] for key in shape.matched if key in said}
    for key in shape.implied:
        if (value := said.get(key, request.get(key))) is not None:
            named[key] = value
    if shape.capped is not None and isinstance(amount := said.get(shape.capped), int):
        named[shape.capped] = amount
    wanted = (*shape.matched, *shape.implied, *((shape.capped,) if shape.capped else ()))
    return named if all(key in named for key in wanted) else None


def _fits(shape: Shape, args: Args, request: Args) -> bool:
    """Whether offered args satisfy the caller's current request (an offer for another is none)."""
    exact = (*shape.required, *shape.matched)
    if any(key in request and args.get(key) != request[key] for key in exact):
        return False
    if not shape.windowed:
        return True
    time = str(args.get("time", ""))
    if (part := request.get("part_of_day")) is not None:
        start, end = PARTS_OF_DAY[str(part)]
        if not (time[:2].isdigit() and start <= int(time[:2]) < end):
            return False
    return str(request.get("after", "00:00")) <= time < str(request.get("before", "24:00"))
