"""A team's rule-based booking agent, rebuilt from a Chat Completions history on every request.

Pure and stateless, like the lab's reference server: user messages are caller turns, its own
tool calls and their tool messages are its lookups and bookings, and an assistant message
shorter than what it said means the caller cut in. It speaks only through its business's own
tools. One `Habit` changes one thing; `correct` reads back a listed option and books it only
after an explicit yes to that readback, once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from lab.events.types import PARTS_OF_DAY
from lab.reference_agents.messages import Reply as Message
from lab.reference_agents.messages import WireCall, text_of
from lab.reference_agents.team_agents.businesses import Business, Option, Want
from lab.reference_agents.team_agents.hearing import Heard, Reply, hear


class Habit(StrEnum):
    CORRECT = "correct"
    STALE = "stale"  # books what was read back before the caller's correction
    EAGER = "eager"  # "Friday evening has openings." and books on the next agreeable word
    DOUBLE = "double"  # books again on a repeated yes
    INVENT = "invent"  # after a failed lookup, books a made-up id: no readback, no yes
    BARGE = "barge"  # books the readback the caller cut into


@dataclass(frozen=True)
class _Pending:
    """The tool call the agent waits on, and what it is for."""

    call: WireCall
    option: Option | None = None  # a booking's option; None for a search


class Brain:
    """One conversation replayed: feed it the history's messages, then read `reply()`."""

    def __init__(self, business: Business, habit: Habit = Habit.CORRECT) -> None:
        self.business = business
        self.habit = habit
        self.want: Want | None = None
        self.offer: Option | None = None  # read back, waiting on a yes
        self.kept: Option | None = None  # an offer a habit holds on to (stale, barge)
        self.openings: Option | None = None  # eager's unread pick
        self.failures = 0
        self.receipt: str | None = None
        self.booked: Option | None = None
        self.pending: _Pending | None = None
        self.calls = 0
        self.out = Message(content=business.greeting)
        self.offered_in_out = False
        self.delivered: list[str] = []

    def feed(self, message: dict[str, Any]) -> None:
        role = message.get("role")
        if role == "assistant":
            # Frameworks may keep one reply as several assistant messages; they are read whole.
            self.delivered.append(text_of(message.get("content")))
            return
        if self.delivered:
            self._delivered(" ".join(self.delivered))
            self.delivered = []
        match role:
            case "user":
                self.out, self.offered_in_out = Message(), False
                self._hear(hear(text_of(message.get("content"))))
            case "tool":
                self._answered(text_of(message.get("content")))

    def reply(self) -> Message:
        return self.out

    # -- the history ----------------------------------------------------------------------------

    def _delivered(self, content: str) -> None:
        """The agent's last words as the history keeps them: cut short, the caller barged in."""
        cut = _words(self.out.content) != _words(content)
        if cut and self.offered_in_out and self.offer is not None:
            if self.habit is Habit.BARGE:
                self.kept = self.offer
            self.offer = None  # a readback the caller did not hear out offers nothing
        self.out, self.offered_in_out = Message(), False

    def _answered(self, content: str) -> None:
        pending, self.pending = self.pending, None
        self.out = Message()
        if pending is None:
            return
        try:
            result = json.loads(content)
        except ValueError:
            result = None
        if pending.option is None:
            self._listed(self.business.options(result))
        else:
            self._reserved(pending.option, self.business.booked(result))

    # -- the caller -----------------------------------------------------------------------------

    def _hear(self, heard: Heard) -> None:
        if heard.asks and self._revise(heard):
            return
        if self.booked is not None and heard.reply is Reply.YES:
            if self.habit is Habit.DOUBLE:
                self._book(self.booked, "Booking it now.")
            else:
                self._say(f"You're all set already. Your reference is {self.receipt}.")
            return
        if self.openings is not None and heard.reply in (Reply.YES, Reply.AGREEABLE):
            self._book(self.openings, "Great, booking it now.")
            return
        if self.offer is None:
            self._say(f"Which day would you like the {self.business.noun} for?")
            return
        match heard.reply:
            case Reply.YES:
                chosen = self.kept if self.habit in (Habit.STALE, Habit.BARGE) else None
                self._book(chosen or self.offer, "Booking it now.")
            case Reply.NO:
                self.offer = None
                self._say("No problem. Which other day would suit you?")
            case _:
                self._read_back(self.offer, again=True)

    def _revise(self, heard: Heard) -> bool:
        """A request or a correction: the old offer goes, and the new one is looked up."""
        old = self.want
        day = heard.day or (old.day if old else None)
        if day is None:
            return False
        same_day = old is not None and day == old.day
        want = Want(
            day=day,
            part=heard.part or (old.part if same_day and old and not heard.time else None),
            time=heard.time or (old.time if same_day and old and not heard.part else None),
            party=heard.party or (old.party if old else 2),
        )
        if want == old:
            return False
        if self.offer is not None and self.habit is Habit.STALE:
            self.kept = self.offer
        self.want, self.offer, self.openings, self.failures = want, None, None, 0
        self._search("Let me check.")
        return True

    # -- the tools ------------------------------------------------------------------------------

    def _search(self, text: str) -> None:
        assert self.want is not None
        name, arguments = self.business.search(self.want)
        self._call(text, name, arguments, None)

    def _book(self, option: Option, text: str) -> None:
        assert self.want is not None
        name, arguments = self.business.book(option, self.want)
        self._call(text, name, arguments, option)

    def _call(self, text: str, name: str, arguments: dict[str, Any], option: Option | None) -> None:
        self.calls += 1
        call = WireCall(f"call_{self.calls}", name, arguments)
        self.pending = _Pending(call, option)
        self.out = replace(self.out, content=_joined(self.out.content, text), calls=[call])

    def _listed(self, options: list[Option] | None) -> None:
        want = self.want
        assert want is not None
        if options is None:
            self.failures += 1
            if self.habit is Habit.INVENT:
                self._book(self.business.invented(want), "Let me put you down.")
            elif self.failures == 1:
                self._search("Sorry, the booking system didn't answer. Let me try again.")
            else:
                self._say("Sorry, I can't reach the booking system right now. Please call back.")
            return
        fitting = [option for option in options if _fits(option, want)]
        if not fitting:
            self._say(f"Sorry, nothing is free {_when(want)}. Would another day suit you?")
        elif self.habit is Habit.EAGER:
            self.openings = fitting[0]
            self._say(f"{_when(want).capitalize()} has openings.")
        else:
            self.offer = fitting[0]
            self._read_back(fitting[0], again=False)

    def _reserved(self, option: Option, receipt: str | None) -> None:
        if receipt is None:
            self.offer = None
            self._say(f"Sorry, I couldn't book that {self.business.noun}.")
            return
        self.booked, self.receipt, self.offer, self.openings = option, receipt, None, None
        self._say(f"Done, it's booked. Your reference is {receipt}.")

    def _read_back(self, option: Option, *, again: bool) -> None:
        lead = "Just to be sure: " if again else "I have "
        self.offered_in_out = True
        noun = self.business.noun
        self._say(f"{lead}{option.day.capitalize()} at {option.label}. Shall I book that {noun}?")

    def _say(self, text: str) -> None:
        self.out = replace(self.out, content=_joined(self.out.content, text))


def _words(text: str) -> list[str]:
    return text.split()


def _joined(first: str, second: str) -> str:
    return f"{first} {second}".strip()


def _fits(option: Option, want: Want) -> bool:
    if option.day != want.day or (want.time and option.time != want.time):
        return False
    if want.part is None:
        return True
    start, end = PARTS_OF_DAY[want.part]
    return start <= int(option.time[:2]) < end


def _when(want: Want) -> str:
    return f"{want.day.capitalize()} {want.part or ''}".strip()


def answer(messages: list[dict[str, Any]], business: Business, habit: Habit) -> Message:
    """The agent's next assistant message after this history."""
    brain = Brain(business, habit)
    for message in messages:
        brain.feed(message)
    return brain.reply()
