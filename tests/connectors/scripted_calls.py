"""A scenario's scripted caller played straight into an agent under test, without the lab.

Only for the connector's and the reference agents' own tests: the lines go in as caller turns,
a line meant to barge into a readback carries that readback as cut (half of it heard), an
acknowledgement over a readback is absorbed as the lab absorbs it, and the fixture toolbox
answers the tools. What the agent did comes back as one transcript to compare.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from lab.connectors.interface import AgentFault, CallerTurn, Cut, Said, ToolCalled
from lab.connectors.openai_chat import OpenAIChatAgent
from lab.connectors.tool_specs import offered_specs
from lab.events.types import Action
from lab.language.backchannel import is_backchannel
from tests.conftest import ROOT
from tests.connectors.toolbox import FixtureToolBox

SCENARIOS = {
    path.stem: json.loads(path.read_text())
    for path in sorted((ROOT / "scenarios").glob("*.json"))
    if not path.stem.startswith("_") and path.stem != "free"
}
_ACTIONS = {"calendar": Action.BOOK, "ledger": Action.REFUND}


def connector(url: str, scenario: dict[str, Any], *, stream: bool = True) -> OpenAIChatAgent:
    tools = offered_specs(frozenset({_ACTIONS[scenario["tool"]]}))
    return OpenAIChatAgent(base_url=url, model="reference", tools=tools, stream=stream)


async def play(url: str, name: str, *, stream: bool = True) -> list[tuple[Any, ...]]:
    """(line number, what happened) for each thing the agent said or called."""
    scenario = SCENARIOS[name]
    faults = [f for f in scenario["faults"] if f["operation"] == "lookup"]
    lost = [f for f in scenario["faults"] if f["kind"] == "lost_answer"]
    box = FixtureToolBox(fail_lookups=len(faults), lose_commits=len(lost))
    agent = connector(url, scenario, stream=stream)
    transcript: list[tuple[Any, ...]] = []
    last_said: list[str] = []
    try:
        async for output in agent.greet(box):
            transcript.append((0, type(output).__name__))
        lines = scenario["caller"]
        for number, line in enumerate(lines, start=1):
            if line.get("after") == "commit_started":
                continue  # said while the previous line's write runs, below
            following = lines[number] if number < len(lines) else None
            if following is not None and following.get("after") == "commit_started":
                # The write answers once the agent has answered the caller's line meanwhile.
                box.during_write = _interjecting(agent, following["say"], number + 1)
            cuts: tuple[Cut, ...] = ()
            if line.get("into_readback_ms") is not None and last_said:
                if is_backchannel(line["say"]):
                    continue
                readback = last_said[-1]
                cuts = (Cut(readback, " ".join(readback.split()[:2])),)
            last_said = []
            async for output in agent.hear(CallerTurn(line["say"], f"ev-{number}", cut=cuts), box):
                match output:
                    case Said(text=text):
                        last_said.append(text)
                        transcript.append((number, "said", text))
                    case ToolCalled(call=call, result=result):
                        transcript.append((number, call.name, call.arguments, result.kind))
                    case AgentFault(kind=kind, reason=reason):
                        transcript.append((number, "fault", kind, reason))
    finally:
        await agent.close()
    return transcript


def _interjecting(agent: OpenAIChatAgent, text: str, number: int) -> Callable[[], Awaitable[None]]:
    async def say() -> None:
        await agent.interject(CallerTurn(text, f"ev-{number}"))

    return say


def commits(transcript: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return [entry for entry in transcript if entry[1] in ("book_appointment", "issue_refund")]
