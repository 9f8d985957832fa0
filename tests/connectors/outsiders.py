"""Test doubles of outside agents: each implements AgentUnderTest as a team's agent might.

They know nothing of the lab's internals; they hear text, call the offered tools by name and
say things. Each has one habit at most.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, Literal

from lab.connectors.interface import (
    AgentIdentity,
    AgentOutput,
    CallerTurn,
    Said,
    ToolBox,
    ToolCall,
    ToolCalled,
    ToolObserved,
    ToolResult,
    TurnFinished,
)
from tests.connectors.toolbox import FixtureToolBox

Habit = Literal[
    "well_behaved",
    "keeps_first_offer",
    "invents_slot",
    "hangs",
    "garbage_args",
    "raises",
    "chatters",
    "no_readback",
    "asks_name",
    "asks_name_after_yes",
    "number_not_on_file",
]
# What the eager agent (no_readback) takes for a go-ahead.
AGREEABLE = ("yes", "okay", "sounds good", "sure", "mm-hmm")
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")
PARTS = ("morning", "afternoon", "evening")


def spoken(hhmm: str) -> str:
    hour, minute = int(hhmm[:2]), int(hhmm[3:])
    return f"{hour % 12 or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


class Outsider:
    """A booking agent with a habit; it books on any turn that says "yes"."""

    def __init__(self, habit: Habit = "well_behaved") -> None:
        self.habit = habit
        self.identity = AgentIdentity(connector="openai", endpoint="test://outsider", model=habit)
        self.offers: list[dict[str, Any]] = []
        self.calls = 0
        self.results: list[ToolCalled] = []
        self.closed = False
        # asks_name: the request it holds until the caller has said who they are.
        self.held: str | None = None

    async def greet(self, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        yield Said("Hello, you have reached the booking line. How can I help?")
        yield TurnFinished()

    async def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        if self.habit == "hangs":
            await asyncio.Event().wait()
        if self.habit == "raises":
            raise ConnectionResetError("the agent's server went away")
        if self.habit == "chatters":
            while True:  # a reply that never ends, a short sentence at a time
                yield Said("Still talking.")
        text = turn.text.lower()
        if self.habit == "asks_name" and self.held is None and not self.offers:
            self.held = text
            yield Said("Sure. Before I look, can I get your name, please?")
            yield TurnFinished()
            return
        if self.habit == "number_not_on_file":
            # Whatever number the caller gives, it is not on file: it never looks, never books.
            asked = "phone number" in text
            yield Said(
                "I can't find that number on file, so I can't book."
                if asked
                else "Before I look, what phone number is the booking under?"
            )
            yield TurnFinished()
            return
        if self.held is not None and "name is" in text:
            text, self.held = self.held, ""
        day = next((d for d in DAYS if d in text), None)
        if day is not None:
            part = next((p for p in PARTS if p in text), None)
            arguments: dict[str, Any] = {"day": day} | ({"part_of_day": part} if part else {})
            called = await self._call(tools, "check_availability", arguments)
            yield called
            options = called.result.content.get("options", [])
            if called.result.kind != "ok" and self.habit == "invents_slot":
                options = [{"slot_id": f"{day[:3]}-1400", "day": day, "time": "14:00"}]
            if options and self.habit == "no_readback":
                self.offers.append(options[0])
                yield Said(f"{day.capitalize()} has openings.")
            elif options:
                option = options[0]
                self.offers.append(option)
                yield Said(
                    f"I have {day.capitalize()} at {spoken(option['time'])}. Shall I book it?"
                )
            else:
                yield Said("I have nothing then.")
        elif self.offers and (
            "yes" in text or (self.habit == "no_readback" and any(w in text for w in AGREEABLE))
        ):
            if self.habit == "asks_name_after_yes" and self.held is None:
                self.held = "yes"  # the booking waits on the name, after the last scripted line
                yield Said("Lovely. What name shall I put it under?")
                yield TurnFinished()
                return
            offer = self.offers[0] if self.habit == "keeps_first_offer" else self.offers[-1]
            arguments = {"slot": 5} if self.habit == "garbage_args" else dict(offer)
            called = await self._call(tools, "book_appointment", arguments)
            yield called
            result = called.result
            if result.kind == "ok":
                yield Said(f"Booked. Your reference is {result.content['receipt_id']}.")
            else:
                yield Said(f"Sorry, that did not work: {result.reason}")
        else:
            yield Said("Could you tell me which day you would like?")
        yield TurnFinished()

    async def close(self) -> None:
        self.closed = True

    async def _call(self, tools: ToolBox, name: str, arguments: dict[str, Any]) -> ToolCalled:
        self.calls += 1
        call = ToolCall(call_id=f"call-{self.calls}", name=name, arguments=arguments)
        called = ToolCalled(call=call, result=await tools.call(call))
        self.results.append(called)
        return called


class _OwnTools(FixtureToolBox):
    """The agent's own tools: the fixture tables, a commit answered with its receipt id."""

    async def call(self, call: ToolCall) -> ToolResult:
        result = await super().call(call)
        if "receipt" in result.content:
            receipt_id = result.content["receipt"]["receipt_id"]
            return ToolResult(result.call_id, result.kind, {"receipt_id": receipt_id})
        return result


class ObservedOutsider(Outsider):
    """The same agent running its own tools, as a pipecat bot does: the lab only sees its calls."""

    def __init__(self, habit: Habit = "well_behaved") -> None:
        super().__init__(habit)
        self.identity = AgentIdentity(
            connector="pipecat", endpoint="test://observed", model=habit, tools_observed_only=True
        )
        self.own_tools = _OwnTools()

    async def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]:
        async for output in super().hear(turn, self.own_tools):
            if isinstance(output, ToolCalled):
                result = {"kind": output.result.kind, "content": output.result.content}
                yield ToolObserved(output.call, result)
            else:
                yield output
