"""A bare tools list (no `results`): where a bot's own lookup result lists its options, which
field names one and which hold its day and time, read from the result itself; two candidate
lists are ambiguous and the run says so instead of guessing."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from lab.agent_tools.loading import parse_tools_file
from lab.agent_tools.observed import AmbiguousResult, describe_results, results_of
from lab.agent_tools.schema import Role
from lab.agent_tools.toolset import Toolset
from lab.connectors.interface import ToolCall
from lab.events.types import AgentFaulted, Event, EventPayload, LookupFailed, LookupSucceeded
from lab.policy.gate import GateState
from lab.referee.referee import Referee
from lab.runs.counters import RunCounters
from lab.runs.observed_tools import ObservedCalls
from lab.scripted.setup import calendar_week
from lab.web.management.agent_tools import results_read
from tests.agent_tools.test_toolset import _function

WEEK = calendar_week()  # Monday 2025-03-10
TABLES = [
    _function("search_tables", {"date": {"type": "string"}}, ["date"]),
    _function("reserve_table", {"table_ref": {"type": "string"}}, ["table_ref"]),
]


def _bare() -> Toolset:
    return Toolset(parse_tools_file(json.dumps({"tools": TABLES})), WEEK)


def test_a_nested_list_is_found_by_the_field_the_commits_id_argument_names() -> None:
    result = {
        "data": {
            "count": 2,
            "tables": [
                {"table_ref": "T4", "date": "2025-03-11", "seating": "7:30 PM", "seats": 4},
                {"table_ref": "T9", "date": "Wednesday", "seating": "21:00", "seats": 2},
            ],
        }
    }
    toolset = _bare()
    read = toolset.results_read("search_tables", result)
    assert read is not None
    assert (read.options, read.id) == ("data.tables", "table_ref")
    assert read.fields == {"date": Role.DAY, "seating": Role.TIME}
    assert toolset.read_options("search_tables", result) == [
        {"slot_id": "T4", "day": "tuesday", "time": "19:30"},
        {"slot_id": "T9", "day": "wednesday", "time": "21:00"},
    ]
    assert describe_results(read) == (
        "options at 'data.tables', each named by 'table_ref'; read by value: date=day, seating=time"
    )


@pytest.mark.parametrize(
    ("result", "path", "key"),
    [
        ([{"code": "A1", "when": "Tuesday 9am"}], "", "code"),
        ({"result": {"openings": [{"ref": "OP-1", "at": "9am"}]}}, "result.openings", "ref"),
        ({"slots": [{"slot_id": "s", "id": "x"}]}, "slots", "id"),
        ({"slots": [{"booking_ref": "s", "slot_id": "x"}]}, "slots", "slot_id"),
    ],
)
def test_an_id_is_found_by_its_name_at_any_depth(result: Any, path: str, key: str) -> None:
    read = results_of(result, ids=())
    assert read is not None and (read.options, read.id) == (path, key)


def test_a_top_level_list_reads_weekday_names_and_clock_times_by_value() -> None:
    result = [
        {"code": "A1", "day": "Tuesday", "at": "9am", "note": "window"},
        {"code": "A2", "day": "2025-03-12", "at": "09:00", "note": "bar"},
        {"code": "A3", "start": "2025-03-13T19:30:00", "day": "thursday", "at": "7:30 PM"},
    ]
    read = results_of(result, ids=())
    assert read is not None and read.fields == {"day": Role.DAY, "at": Role.TIME}
    assert _bare().read_options("search_tables", result) == [
        {"slot_id": "A1", "day": "tuesday", "time": "09:00"},
        {"slot_id": "A2", "day": "wednesday", "time": "09:00"},
        {"slot_id": "A3", "day": "thursday", "time": "19:30"},
    ]


def test_no_list_with_an_id_is_no_inference_and_a_file_with_results_is_never_second_guessed() -> (
    None
):
    assert results_of({"tables": [{"seating": "9am"}], "message": "ok"}, ids=()) is None
    written = {
        "tools": TABLES,
        "meanings": {"search_tables": {"results": {"options": "data.tables", "id": "table_ref"}}},
    }
    toolset = Toolset(parse_tools_file(json.dumps(written)), WEEK)
    result = {"data": {"tables": [{"table_ref": "T4"}]}, "other": [{"id": "x"}]}
    assert toolset.results_read("search_tables", result) is None  # the file says where


def test_two_candidate_lists_are_ambiguous_naming_both() -> None:
    result = {"tables": [{"id": "T1", "at": "9am"}], "waitlist": [{"id": "W1", "at": "10am"}]}
    with pytest.raises(AmbiguousResult, match="'tables' and 'waitlist'; name one in `results`"):
        _bare().read_options("search_tables", result)


def _observed(events: list[EventPayload]) -> ObservedCalls:
    async def record(payload: EventPayload) -> Event:
        events.append(payload)
        return None  # type: ignore[return-value]  # the calls under test only append

    return ObservedCalls(
        record=record,
        referee=Referee(tools=frozenset(), week=WEEK),
        gate=GateState(),
        counters=RunCounters(),
        guarded=False,
        toolset=_bare(),
        known={},
    )


def test_an_observed_lookup_records_what_was_read_and_an_ambiguous_one_faults() -> None:
    events: list[EventPayload] = []
    calls = _observed(events)
    call = ToolCall("c1", "search_tables", {"date": "Tuesday"})
    read = calls.toolset.read("search_tables", call.arguments, {})
    result = {"data": {"tables": [{"table_ref": "T4", "date": "Tuesday", "seating": "9am"}]}}
    asyncio.run(calls.lookup(call, read, result))
    succeeded = next(e for e in events if isinstance(e, LookupSucceeded))
    assert succeeded.options == [{"slot_id": "T4", "day": "tuesday", "time": "09:00"}]
    assert succeeded.results_read == {
        "tool": "search_tables",
        "options": "data.tables",
        "id": "table_ref",
        "fields": {"date": "day", "seating": "time"},
    }
    assert calls.known["T4"] == succeeded.options[0]
    events.clear()
    ambiguous = {"tables": [{"id": "T1", "at": "9am"}], "waitlist": [{"id": "W1", "at": "9am"}]}
    asyncio.run(calls.lookup(call, read, ambiguous))
    assert [type(e) for e in events][-2:] == [LookupFailed, AgentFaulted]
    fault = events[-1]
    assert isinstance(fault, AgentFaulted) and fault.fault_kind == "unread"
    assert "search_tables: two lists could be the options" in fault.reason


def test_runscenarios_prints_each_reading_once() -> None:
    read = {"tool": "search_tables", "options": "", "id": "code", "fields": {"at": "time"}}
    payloads = [
        LookupSucceeded(attempt_id=f"lk-1-{n}", options=[], results_read=read) for n in (1, 2)
    ]
    events = [
        Event(id=f"e{n}", seq=n, at=datetime.now(UTC), payload=p, prev_hash="", hash="")
        for n, p in enumerate([*payloads, LookupSucceeded(attempt_id="x", options=[])], 1)
    ]
    assert results_read(events) == [
        "search_tables: its own results read as options at the result itself, each named by "
        "'code'; read by value: at=time"
    ]
