"""The OpenAI-compatible connector against the reference server, a real subprocess on loopback."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from lab.connectors.interface import (
    CallerTurn,
    Said,
    ToolCall,
    ToolCalled,
    ToolResult,
    TurnFinished,
)
from lab.connectors.openai_chat import OpenAIChatAgent
from lab.connectors.tool_specs import offered_specs, tools_digest
from lab.events.types import Action
from tests.connectors.scripted_calls import play
from tests.connectors.toolbox import FixtureToolBox

Start = Callable[[str | None], str]
CALENDAR = offered_specs(frozenset({Action.BOOK}))


class OddSlot(FixtureToolBox):
    """Answers every availability lookup with one slot no fixture has."""

    async def call(self, call: ToolCall) -> ToolResult:
        if call.name == "check_availability":
            self.calls.append(call)
            slot = {"slot_id": "tue-0745", "day": "tuesday", "time": "07:45"}
            return ToolResult(call.call_id, "ok", {"options": [slot]})
        return await super().call(call)


async def test_it_runs_each_tool_call_through_the_toolbox_and_answers_it(
    reference_server: Start,
) -> None:
    agent = OpenAIChatAgent(base_url=reference_server(None), model="any", tools=CALENDAR)
    box = OddSlot()
    try:
        outputs = [o async for o in agent.hear(CallerTurn("Tuesday morning, please.", "ev-1"), box)]
        confirmed = [o async for o in agent.hear(CallerTurn("Yes, book it.", "ev-2"), box)]
    finally:
        await agent.close()
    lookups = [o for o in outputs if isinstance(o, ToolCalled)]
    assert [c.call.arguments for c in lookups] == [{"day": "tuesday", "part_of_day": "morning"}]
    # The tool message carried the toolbox's answer: the agent offers the one slot it was given.
    assert Said("I have Tuesday at 7:45 AM.") in outputs
    assert outputs[-1] == TurnFinished()
    (booked,) = [o for o in confirmed if isinstance(o, ToolCalled)]
    assert booked.call.name == "book_appointment"
    assert booked.call.arguments == {"slot_id": "tue-0745", "day": "tuesday", "time": "07:45"}
    assert Said("Your reference is rc-1.") in confirmed  # the receipt the toolbox gave


async def test_it_says_a_streamed_reply_sentence_by_sentence(reference_server: Start) -> None:
    agent = OpenAIChatAgent(
        base_url=reference_server(None), model="any", tools=CALENDAR, system_prompt="Be brief."
    )
    try:
        greeting = [o async for o in agent.greet(FixtureToolBox())]
    finally:
        await agent.close()
    assert greeting == [
        Said("Hello, you've reached the booking and refunds line."),
        Said("How can I help?"),
        TurnFinished(),
    ]


async def test_a_whole_reply_and_a_streamed_one_say_and_call_the_same(
    reference_server: Start,
) -> None:
    url = reference_server(None)
    streamed = await play(url, "correction", stream=True)
    whole = await play(url, "correction", stream=False)
    assert whole == streamed
    assert "book_appointment" in {entry[1] for entry in streamed}


async def test_its_identity_names_the_reported_model_and_digests_without_secrets(
    reference_server: Start,
) -> None:
    url = reference_server("double-book").replace("http://", "http://user:hunter2@")
    agent = OpenAIChatAgent(base_url=url, model="asked-for", tools=CALENDAR, system_prompt="Hi.")
    assert agent.identity.model == "asked-for"
    # Before any reply: the server's one listed model (what run.started records).
    await agent.identify()
    assert agent.identity.model == "scripted-double-book"
    try:
        greeting = [o async for o in agent.greet(FixtureToolBox())]
    finally:
        await agent.close()
    assert greeting[-1] == TurnFinished()
    identity = agent.identity
    assert identity.connector == "openai"
    assert identity.model == "scripted-double-book"
    assert identity.system_prompt_digest == hashlib.sha256(b"Hi.").hexdigest()
    assert identity.tools_digest == tools_digest(CALENDAR)
    assert identity.endpoint is not None
    assert "hunter2" not in identity.endpoint and "user" not in identity.endpoint
    assert identity.endpoint.startswith("http://127.0.0.1:") and identity.endpoint.endswith("/v1")
