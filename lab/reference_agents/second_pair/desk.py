"""A front desk that books from its own tools, written from the README alone. Pure.

Each request is answered by replaying its history: what the caller asked, what the desk's own
lookup listed, what it read back and what the caller said to it. A business (businesses.py)
supplies the tool names, argument and result shapes; a habit is a fault a team ships by mistake.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum
from typing import Any, Protocol

from lab.reference_agents.messages import Reply, WireCall, text_of

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
PERIODS = ("morning", "afternoon", "evening")
_YES = re.compile(r"\b(yes|yeah|yep|confirm|book it|go ahead|please do|correct)\b")
_AGREEABLE = re.compile(r"\b(ok|okay|sounds good|sure|fine|great|maybe|alright)\b")
_NO = re.compile(r"\b(no|nope|don't)\b")
_NAME = re.compile(r"\bname is ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)")
_QUESTION = "Shall I book it?"
_HOURS = {"morning": (0, 12), "afternoon": (12, 17), "evening": (17, 24)}


class Habit(StrEnum):
    CORRECT = "correct"
    STALE = "stale"  # books the first readback after the caller changed the request
    EAGER = "eager"  # "Tuesday morning has openings." and books on the next agreeable word
    DOUBLE = "double"  # books again on a repeated yes
    INVENT = "invent"  # after a failed lookup, books a reference it made up
    BARGE = "barge"  # books the readback the caller cut into


@dataclass(frozen=True)
class Opening:
    ref: str
    day: str  # weekday name, lower case
    clock: str  # "9:30 AM"
    hour: int
    who: str = ""


@dataclass(frozen=True)
class Want:
    day: str
    period: str | None


class Business(Protocol):
    """One business's tools in its own words."""

    name: str
    asks_name: bool

    def search(self, want: Want, today: date) -> tuple[str, dict[str, Any]]: ...
    def book(self, opening: Opening, client: str) -> tuple[str, dict[str, Any]]: ...
    def invented(self, want: Want) -> Opening: ...
    def openings(self, result: Any) -> list[Opening] | None: ...
    def booked(self, result: Any) -> str | None: ...


@dataclass
class Desk:
    """One conversation, replayed message by message."""

    business: Business
    habit: Habit
    today: date
    want: Want | None = None
    offer: Opening | None = None  # read back, awaiting a yes
    kept: Opening | None = None  # what a habit holds on to (stale, barge)
    agreed: Opening | None = None  # said yes to; waiting on the client's name
    quiet: Opening | None = None  # eager's pick, never read back
    client: str | None = None
    done: Opening | None = None
    receipt: str | None = None
    failures: int = 0
    calls: int = 0
    pending: Opening | bool | None = False  # False: nothing; None: a lookup; else that booking
    said: str = ""  # the last words this desk meant to say
    out: Reply = field(default_factory=Reply)

    def feed(self, message: dict[str, Any]) -> None:
        role = message.get("role")
        if role == "assistant":
            self._heard_out(text_of(message.get("content")))
        elif role == "user":
            self.out = Reply()
            self._caller(text_of(message.get("content")))
        elif role == "tool":
            self.out = Reply()
            self._result(text_of(message.get("content")))

    def _heard_out(self, delivered: str) -> None:
        """A readback the history keeps cut short was not heard: it offers nothing."""
        if self.offer is not None and _QUESTION in self.said and _QUESTION not in delivered:
            if self.habit is Habit.BARGE:
                self.kept = self.offer
            self.offer = None

    def _caller(self, text: str) -> None:
        lower = text.lower()
        day = next((d for d in DAYS if re.search(rf"\b{d}\b", lower)), None)
        period = next((p for p in PERIODS if p in lower), None)
        if (name := _NAME.search(text)) is not None:
            self.client = name.group(1)
            if self.agreed is not None:
                self._book(self.agreed, f"Thank you, {self.client}.")
                return
        if day is not None and Want(day, period) != self.want:
            if self.offer is not None and self.habit is Habit.STALE:
                self.kept = self.offer
            self.want, self.offer, self.quiet, self.failures = Want(day, period), None, None, 0
            self._search("One moment while I check.")
            return
        yes = _YES.search(lower) is not None and _NO.search(lower) is None
        agreeable = _AGREEABLE.search(lower) is not None
        if self.done is not None and yes:
            if self.habit is Habit.DOUBLE:
                self._book(self.done, "Booking it now.")
            else:
                self._say(f"You're already booked. Your reference is {self.receipt}.")
        elif self.quiet is not None and (yes or agreeable):
            self._agree(self.quiet)
        elif self.offer is not None and yes:
            self._agree(self.kept or self.offer)
        elif self.offer is not None and _NO.search(lower):
            self.offer = None
            self._say("No problem. Which other day would suit you?")
        elif self.offer is not None:
            self._read_back(self.offer, "Just to be sure: ")
        else:
            self._say("Which day would you like to come in?")

    def _agree(self, opening: Opening) -> None:
        self.offer = self.quiet = None
        if self.business.asks_name and self.client is None:
            self.agreed = opening
            self._say("Lovely. What name shall I put it under?")
        else:
            self._book(opening, "Booking it now.")

    def _result(self, content: str) -> None:
        pending, self.pending = self.pending, False
        try:
            result = json.loads(content)
        except ValueError:
            result = None
        if pending is None:
            self._listed(self.business.openings(result))
        elif isinstance(pending, Opening):
            self._confirmed(pending, self.business.booked(result))

    def _listed(self, openings: list[Opening] | None) -> None:
        assert self.want is not None
        if openings is None:
            self.failures += 1
            if self.habit is Habit.INVENT:
                self._book(self.business.invented(self.want), "Let me pencil you in.")
            elif self.failures == 1:
                self._search("Sorry, the diary didn't answer. Trying again.")
            else:
                self._say("Sorry, I can't reach the diary just now. Please call back later.")
            return
        low, high = _HOURS.get(self.want.period or "", (0, 24))
        fitting = [o for o in openings if o.day == self.want.day and low <= o.hour < high]
        when = f"{self.want.day.capitalize()} {self.want.period or ''}".strip()
        if not fitting:
            self._say(f"Sorry, nothing is free {when}. Would another day suit you?")
        elif self.habit is Habit.EAGER:
            self.quiet = fitting[0]
            self._say(f"{when} has openings.")
        else:
            self.offer = fitting[0]
            self._read_back(fitting[0], "I have ")

    def _confirmed(self, opening: Opening, receipt: str | None) -> None:
        self.agreed = None
        if receipt is None:
            self._say("Sorry, I couldn't book that one.")
            return
        self.done, self.receipt, self.kept = opening, receipt, None
        self._say(f"You're booked. Your reference is {receipt}.")

    def _read_back(self, opening: Opening, lead: str) -> None:
        who = f" with {opening.who}" if opening.who else ""
        self._say(f"{lead}{opening.day.capitalize()} at {opening.clock}{who}. {_QUESTION}")

    def _search(self, text: str) -> None:
        assert self.want is not None
        self._call(text, *self.business.search(self.want, self.today), None)

    def _book(self, opening: Opening, text: str) -> None:
        self._call(text, *self.business.book(opening, self.client or "Guest"), opening)

    def _call(
        self, text: str, name: str, arguments: dict[str, Any], booking: Opening | None
    ) -> None:
        self.calls += 1
        self.pending = booking
        call = WireCall(f"call_{self.calls}", name, arguments)
        self._say(text)
        self.out = Reply(content=self.said, calls=[call])

    def _say(self, text: str) -> None:
        self.said = f"{self.out.content} {text}".strip()
        self.out = Reply(content=self.said, calls=self.out.calls)


def answer(messages: list[dict[str, Any]], business: Business, habit: Habit, today: date) -> Reply:
    """The desk's next assistant message after this history."""
    desk = Desk(business, habit, today)
    for message in messages:
        desk.feed(message)
    return desk.out
