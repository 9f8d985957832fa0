"""A run of an agent with its own tools (a tools file): called in its names and shapes, gated
on what the calls mean, recorded as the lab's own tools are, and listed as-is over MCP."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from lab.agent_tools.loading import parse_tools_file
from lab.agent_tools.toolset import Toolset
from lab.connectors.interface import ToolCall
from lab.connectors.mcp_access import mcp_token_issue, run_tool_specs
from lab.connectors.mcp_server import tool_result
from lab.connectors.registry import AgentSpec
from lab.events.types import Channel, CommitFailed, CommitStarted, Mode, ToolCallInvalid
from lab.runs.external_tools import GatedToolBox
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.scripted.setup import calendar_week
from tests.connectors.outsiders import Outsider

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {
    "business": "Trattoria Lume",
    "tools": [
        {
            "name": "search_tables",
            "description": "Free tables on a date.",
            "inputSchema": {"type": "object", "properties": {"date": {"type": "string"}}},
        },
        {
            "name": "reserve_table",
            "description": "Reserve one table.",
            "inputSchema": {
                "type": "object",
                "properties": {"table_id": {"type": "string"}, "guests": {"type": "integer"}},
            },
        },
    ],
    "meanings": {
        "search_tables": {
            "results": {
                "options": "data.tables",
                "id": "table_id",
                "fields": {"date": "day", "seating": "time"},
            },
            "time_format": "12h",
        }
    },
}
SPEC = AgentSpec(
    connector="openai",
    endpoint="http://127.0.0.1:9/v1",
    toolset=Toolset(parse_tools_file(json.dumps(TOOLS)), calendar_week()),
)


async def started(mode: Mode) -> RunSession:
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=mode, channel=Channel.TYPED, agent=SPEC
    )
    session = RunSession(run=run, contract=contract_get("correction"), agent=Outsider())
    await session.start()
    return session


def toolbox(session: RunSession) -> GatedToolBox:
    assert session.toolbox is not None and session.toolbox.toolset is not None
    return session.toolbox


async def test_as_is_a_lookup_in_the_agents_words_is_answered_in_its_shape(fast_clock):
    session = await started(Mode.UNGUARDED)
    result = await toolbox(session).call(ToolCall("c1", "search_tables", {"date": "Monday"}))
    assert result.kind == "ok" and result.wire is not None
    tables = result.wire["data"]["tables"]
    assert [table["seating"] for table in tables] == ["9:00 AM", "10:30 AM", "2:00 PM"]
    assert set(tables[0]) == {"table_id", "date", "seating"}
    started_lookup = next(e.payload for e in session.events if e.type == "tool.lookup.started")
    assert started_lookup.query == {"day": "monday"}
    # The agent reserves by its listed id: the sandbox executes the option that id names.
    booked = await toolbox(session).call(
        ToolCall("c2", "reserve_table", {"table_id": tables[0]["table_id"], "guests": 2})
    )
    assert booked.kind == "ok" and booked.wire == {"ok": True, **booked.content}
    commit = next(e.payload for e in session.events if isinstance(e.payload, CommitStarted))
    assert commit.args == {"slot_id": tables[0]["table_id"], "day": "monday", "time": "09:00"}
    await session.end(reason_kind="completed", reason="test")


async def test_an_invented_table_is_still_an_attempt_recorded_and_refused(fast_clock):
    session = await started(Mode.UNGUARDED)
    result = await toolbox(session).call(ToolCall("c1", "reserve_table", {"table_id": "T-99"}))
    assert result.kind == "failed" and result.wire is not None and result.wire["ok"] is False
    commit = next(e.payload for e in session.events if isinstance(e.payload, CommitStarted))
    assert commit.args == {"slot_id": "T-99"} and commit.confirmation_event_id is None
    assert any(isinstance(e.payload, CommitFailed) for e in session.events)
    await session.end(reason_kind="completed", reason="test")


async def test_guarded_the_gate_decides_on_what_the_call_means(fast_clock):
    session = await started(Mode.GUARDED)
    result = await toolbox(session).call(ToolCall("c1", "search_tables", {"date": "Monday"}))
    assert result.kind == "blocked" and result.wire == {"ok": False, "error": result.reason}
    bad = await toolbox(session).call(ToolCall("c2", "search_tables", {"date": "someday"}))
    assert bad.kind == "invalid" and "search_tables.date: 'someday' is not a day" in bad.reason
    assert [e.payload.name for e in session.events if isinstance(e.payload, ToolCallInvalid)] == [
        "search_tables"
    ]
    await session.end(reason_kind="completed", reason="test")


async def test_run_started_records_the_tools_files_digest_and_the_mapping(fast_clock):
    session = await started(Mode.GUARDED)
    identity = next(e.payload for e in session.events if e.type == "run.started").agent
    assert identity.tools_file_digest == SPEC.toolset.digest  # type: ignore[union-attr]
    assert identity.tools_today is None  # the file sets none: the lab's calendar
    assert identity.tools_mapping["reserve_table"]["args"] == {
        "table_id": "option_id",
        "guests": "context",
    }
    await session.end(reason_kind="completed", reason="test")


async def test_run_started_records_the_tools_files_own_today(fast_clock):
    toolset = Toolset(parse_tools_file(json.dumps({**TOOLS, "today": "2025-03-09"})), None)
    run = await database_sync_to_async(run_start)(
        scenario_id="correction",
        mode=Mode.GUARDED,
        channel=Channel.TYPED,
        agent=AgentSpec(connector="openai", endpoint="http://127.0.0.1:9/v1", toolset=toolset),
    )
    session = RunSession(run=run, contract=contract_get("correction"), agent=Outsider())
    await session.start()
    identity = next(e.payload for e in session.events if e.type == "run.started").agent
    assert identity is not None and identity.tools_today == "2025-03-09"
    await session.end(reason_kind="completed", reason="test")


@database_sync_to_async
def _listed() -> list[str]:
    run = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED, agent=SPEC)
    mcp_token_issue(run=run)
    return [tool.name for tool in run_tool_specs(run)]


async def test_mcp_lists_the_agents_own_tools_and_answers_in_its_shape():
    assert await _listed() == ["search_tables", "reserve_table"]
    session = await started(Mode.UNGUARDED)
    result = await toolbox(session).call(ToolCall("c1", "search_tables", {"date": "Monday"}))
    on_wire = tool_result(result)
    assert not on_wire.is_error and on_wire.structured_content == result.wire
    await session.end(reason_kind="completed", reason="test")
