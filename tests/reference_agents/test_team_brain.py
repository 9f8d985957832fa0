"""The team agents' brain on histories written by hand: its own tools and words, and each habit."""

from __future__ import annotations

import json
from typing import Any

from lab.reference_agents.messages import Reply
from lab.reference_agents.team_agents.brain import Habit, answer
from lab.reference_agents.team_agents.businesses import BUSINESSES
from lab.reference_agents.team_agents.hearing import Reply as Said
from lab.reference_agents.team_agents.hearing import hear

TRATTORIA = BUSINESSES["trattoria"]
TABLES = {
    "data": {
        "tables": [
            {"table_id": "A7", "date": "2025-03-11", "seating": "9:30 AM"},
            {"table_id": "B2", "date": "2025-03-11", "seating": "3:00 PM"},
        ]
    }
}
THURSDAY = {"data": {"tables": [{"table_id": "C4", "date": "2025-03-13", "seating": "2:00 PM"}]}}


class History:
    """A conversation with the brain, each reply appended as a client keeps it."""

    def __init__(self, habit: Habit = Habit.CORRECT) -> None:
        self.habit = habit
        self.messages: list[dict[str, Any]] = []

    def greet(self) -> Reply:
        self.messages.append({"role": "system", "content": "You are Trattoria Lume's line."})
        return self._next()

    def user(self, text: str, *, heard: str | None = None) -> Reply:
        """The caller's turn; heard: what the caller heard of the last reply (a barge-in)."""
        if heard is not None:
            self.messages[-1]["content"] = heard
        self.messages.append({"role": "user", "content": text})
        return self._next()

    def tool(self, result: dict[str, Any]) -> Reply:
        call_id = self.messages[-1]["tool_calls"][0]["id"]
        self.messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)}
        )
        return self._next()

    def _next(self) -> Reply:
        reply = answer(self.messages, TRATTORIA, self.habit)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.calls:
            message["tool_calls"] = [
                {"id": c.call_id, "type": "function", "function": {"name": c.name}}
                for c in reply.calls
            ]
        self.messages.append(message)
        return reply


def _call(reply: Reply) -> tuple[str, dict[str, Any]]:
    (call,) = reply.calls
    return call.name, call.arguments


def test_it_hears_days_times_parts_and_yes_apart_from_sounding_agreeable() -> None:
    heard = hear("Wait, no. Friday evening at 7:30 pm for four instead.")
    assert (heard.day, heard.time, heard.part, heard.party, heard.reply) == (
        "friday",
        "19:30",
        "evening",
        4,
        Said.NO,
    )
    assert hear("Yes, book it.").reply is Said.YES
    assert hear("Sounds good so far.").reply is Said.AGREEABLE
    assert hear("Hmm, maybe.").reply is Said.AGREEABLE


def test_it_reads_back_a_listed_table_and_reserves_it_once_on_a_yes() -> None:
    call = History()
    assert call.greet().content.startswith("Buongiorno, Trattoria Lume.")
    asked = call.user("A table on Tuesday morning, please.")
    assert _call(asked) == ("search_tables", {"date": "Tuesday", "party_size": 2})
    offer = call.tool(TABLES)
    assert offer.content == "I have Tuesday at 9:30 AM. Shall I book that table?"
    assert not call.user("Sounds good so far.").calls
    reserve = call.user("Yes, book it.")
    assert _call(reserve) == ("reserve_table", {"table_id": "A7", "guests": 2, "time": "9:30 AM"})
    assert "R-1" in call.tool({"ok": True, "receipt_id": "R-1"}).content
    assert not call.user("Yes, confirm.").calls


def test_a_failed_search_is_retried_once_and_never_invented_over() -> None:
    call = History()
    call.user("Wednesday afternoon, please.")
    retry = call.tool({"ok": False, "error": "timeout"})
    assert _call(retry)[0] == "search_tables"
    gave_up = call.tool({"ok": False, "error": "timeout"})
    assert not gave_up.calls and "can't reach" in gave_up.content


def test_stale_books_the_table_read_back_before_the_correction() -> None:
    call = History(Habit.STALE)
    call.user("Tuesday morning, please.")
    call.tool(TABLES)
    call.user("Actually, make that Thursday afternoon.")
    assert call.tool(THURSDAY).content.startswith("I have Thursday at 2:00 PM")
    assert _call(call.user("Yes, book it."))[1]["table_id"] == "A7"


def test_eager_says_there_are_openings_and_books_on_an_agreeable_word() -> None:
    call = History(Habit.EAGER)
    call.user("Tuesday morning, please.")
    assert call.tool(TABLES).content == "Tuesday morning has openings."
    assert _call(call.user("Sounds good so far."))[1]["table_id"] == "A7"


def test_double_books_again_on_a_repeated_yes() -> None:
    call = History(Habit.DOUBLE)
    call.user("Tuesday morning, please.")
    call.tool(TABLES)
    call.user("Yes, book it.")
    call.tool({"ok": True, "receipt_id": "R-1"})
    assert _call(call.user("Yes, confirm."))[1]["table_id"] == "A7"


def test_invent_reserves_a_table_nobody_listed_after_a_failed_search() -> None:
    call = History(Habit.INVENT)
    call.user("Wednesday afternoon, please.")
    name, arguments = _call(call.tool({"ok": False, "error": "timeout"}))
    assert name == "reserve_table" and arguments["table_id"] not in ("A7", "B2", "C4")


def test_a_cut_readback_is_no_offer_but_barge_books_it() -> None:
    for habit, booked in ((Habit.CORRECT, "C4"), (Habit.BARGE, "A7")):
        call = History(habit)
        call.user("Tuesday morning, please.")
        call.tool(TABLES)
        call.user("Wait, no. Thursday afternoon instead.", heard="I have Tuesday")
        call.tool(THURSDAY)
        assert _call(call.user("Yes, confirm."))[1]["table_id"] == booked, habit
