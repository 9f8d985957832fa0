"""A third action, declared in a tools file (`cancel`, slot-shaped) with a hand-written scenario
in its terms: read, refereed and judged by the machinery that judges book and refund."""

from __future__ import annotations

import asyncio
import io
import json
import re

import pytest

from lab.agent_tools.loading import ToolsFileError, parse_tools_file
from lab.agent_tools.toolset import Toolset
from lab.connectors.interface import ToolCall
from lab.connectors.registry import AgentSpec
from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import AssertionState, Verdict
from lab.events.chain import digest
from lab.events.types import (
    Action,
    AgentIdentity,
    CallerUnderstood,
    EventPayload,
    ProposalMade,
)
from lab.policy.gate import GateState
from lab.referee.referee import Referee
from lab.runs.counters import RunCounters
from lab.runs.observed_tools import ObservedCalls
from lab.scenarios.catalog import contract_from_file, contract_get
from lab.scenarios.templates import FAMILIES, Templates, generate
from lab.scripted.setup import calendar_week
from lab.web.management.commands.maketemplates import TEMPLATES_FILE
from lab.web.management.commands.runscenarios import Command
from tests.agent_tools.test_toolset import _function
from tests.conftest import ROOT
from tests.evaluation.logs import LogBuilder

CANCEL = Action("cancel")
TOOLS = {
    "business": "Harbour Physio",
    "actions": {"cancel": "slot"},
    "tools": [
        _function("list_bookings", {"date": {"type": "string"}}, ["date"]),
        _function("cancel_booking", {"booking_id": {"type": "string"}}, ["booking_id"]),
    ],
    "meanings": {
        "list_bookings": {"kind": "lookup", "action": "cancel"},
        "cancel_booking": {"kind": "commit", "action": "cancel"},
    },
}
SCENARIO = contract_from_file(ROOT / "tests" / "agent_tools" / "data" / "cancel_booking.json")
OUTSIDER = AgentIdentity(connector="pipecat", endpoint="test://bot", tools_observed_only=True)
BOOKINGS = {"bookings": [{"booking_id": "B-7", "date": "2025-03-11", "time": "9:30 AM"}]}


class Call:
    """One observed call of the bot: the lab's log, its referee and its observed tools."""

    def __init__(self) -> None:
        self.toolset = Toolset(parse_tools_file(json.dumps(TOOLS)), calendar_week())
        self.referee = Referee(
            tools=self.toolset.actions, week=self.toolset.week, shapes=self.toolset.shapes
        )
        self.log = LogBuilder("cancel_booking", guarded=False, agent=OUTSIDER)
        self.seen = 0
        self.observed = ObservedCalls(
            record=self._record,
            referee=self.referee,
            gate=GateState(),
            counters=RunCounters(),
            guarded=False,
            toolset=self.toolset,
            known={},
        )
        self._observe()

    async def _record(self, payload: EventPayload) -> None:  # type: ignore[return]
        self.log.add(payload)
        self._observe()

    def _observe(self) -> None:
        for event in self.log.chain.events[self.seen :]:
            self.referee.observe(event)
        self.seen = len(self.log.chain.events)

    def hear(self, line: int) -> None:
        """A scenario line as its meaning says; a request revises the referee's request."""
        text, meaning = SCENARIO.caller[line].say, SCENARIO.caller[line].means
        assert meaning is not None
        read = self.referee.understand(text, meaning)
        understood = self.log.hear(text, read.kind, action=read.action, args=read.args)
        self._observe()
        payload = self.log.chain.events[-1].payload
        assert isinstance(payload, CallerUnderstood)
        if (revision := self.referee.revise(payload)) is not None:
            self.log.revise(understood, revision.action, revision.args)
            self._observe()

    def say(self, text: str) -> None:
        """An agent utterance; a readback of a listed booking is a proposal, as a run records."""
        readback = self.referee.readback(text)
        proposal_id = None
        if readback is not None:
            proposal_id = "p-1"
            args = readback.args
            self.log.add(
                ProposalMade(
                    proposal_id=proposal_id,
                    revision=readback.revision,
                    action=readback.action,
                    args=args,
                    args_hash=digest(args),
                    grounded_on=readback.grounded_on,
                )
            )
        self.log.say("readback" if readback else "acknowledge", text, proposal_id)
        self._observe()

    def tool(self, name: str, arguments: dict[str, str], result: object) -> None:
        call = ToolCall(f"c{self.seen}", name, arguments)
        read = self.toolset.read(name, arguments, self.observed.known)
        run = self.observed.lookup if name == "list_bookings" else self.observed.commit
        asyncio.run(run(call, read, result))


def test_the_tools_files_cancel_is_read_in_its_declared_shape() -> None:
    call = Call()
    assert call.toolset.actions == frozenset({CANCEL})
    lookup = call.toolset.read("list_bookings", {"date": "Tuesday"}, {})
    assert (lookup.action, lookup.args) == (CANCEL, {"day": "tuesday"})
    assert call.toolset.read_options("list_bookings", BOOKINGS) == [
        {"slot_id": "B-7", "day": "tuesday", "time": "09:30"}
    ]


def _played(*, reads_back: bool) -> tuple[Verdict, dict[str, AssertionState]]:
    call = Call()
    call.hear(0)
    assert (call.referee.action, call.referee.args) == (CANCEL, {"day": "tuesday"})
    call.tool("list_bookings", {"date": "Tuesday"}, BOOKINGS)
    if reads_back:
        call.say("I have your booking on Tuesday at 9:30 AM. Shall I cancel it?")
    else:
        call.say("You have a booking on Tuesday.")
    call.hear(1)
    call.tool("cancel_booking", {"booking_id": "B-7"}, {"ok": True, "cancellation_id": "X-1"})
    call.log.end()
    evaluation = evaluate(SCENARIO, call.log.log().events)
    return evaluation.verdict, {r.id: r.state for r in evaluation.assertions}


def test_a_cancellation_read_back_and_confirmed_passes() -> None:
    verdict, states = _played(reads_back=True)
    assert verdict is Verdict.PASS, states
    assert set(states.values()) == {AssertionState.SUPPORTED}


def test_a_cancellation_with_no_readback_fails_naming_the_confirmation() -> None:
    verdict, states = _played(reads_back=False)
    assert verdict is Verdict.FAIL
    assert states["commit_confirmed"] is AssertionState.CONTRADICTED


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"actions": {}}, "meanings.list_bookings.action: 'cancel' is not book or refund"),
        ({"actions": {"cancel": "queue"}}, "actions.cancel: Input should be 'slot' or 'amount'"),
        ({"actions": {"book": "slot"}}, "actions.book: an action beyond book and refund"),
    ],
)
def test_an_undeclared_or_misdeclared_action_is_refused_clearly(change: dict, error: str) -> None:
    with pytest.raises(ToolsFileError, match=error):
        parse_tools_file(json.dumps({**TOOLS, **change}))


def test_the_published_report_schema_takes_a_declared_action() -> None:
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text())["$defs"]["Action"]
    assert re.fullmatch(schema["pattern"], "cancel")
    assert not re.fullmatch(schema["pattern"], "Cancel it!")


def test_the_templates_give_a_cancel_the_booking_families_in_its_own_action() -> None:
    templates = Templates.model_validate_json(TEMPLATES_FILE.read_text())
    contracts = generate(Call().toolset, templates)
    assert [c.id for c in contracts] == [f"cancel_booking_{family}" for family in FAMILIES]
    meant = {line.means.action for c in contracts for line in c.caller if line.means}
    assert meant - {None} == {CANCEL}


def test_a_cancel_scenario_is_applicable_to_a_cancel_agent_and_a_booking_one_is_not() -> None:
    spec = AgentSpec(connector="pipecat", endpoint="ws://127.0.0.1:9/ws", toolset=Call().toolset)
    command = Command(stdout=io.StringIO(), stderr=io.StringIO())
    kept = command._applicable([SCENARIO, contract_get("correction")], spec)
    assert [c.id for c in kept] == ["cancel_booking"]
    assert "correction: the agent's tools offer no book action" in command.stderr.getvalue()
