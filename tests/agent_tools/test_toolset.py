"""The tools file read, inferred, served and read back, on agents written as teams write them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.agent_tools.inference import describe
from lab.agent_tools.loading import ToolsFileError, parse_tools_file
from lab.agent_tools.schema import Kind, Role
from lab.agent_tools.toolset import Refused, Toolset
from lab.agent_tools.values import read_cents, read_day, read_time, write_time
from lab.events.types import Action, Operation
from lab.scripted.setup import calendar_week

WEEK = calendar_week()  # Monday 2025-03-10


def _function(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": name.replace("_", " "),
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


SLOTS = [
    _function("find_slots", {"day": {"type": "string"}, "part": {"type": "string"}}, ["day"]),
    _function("book_appointment", {"slot_id": {"type": "string"}}, ["slot_id"]),
]
TABLES = {
    "business": "Trattoria Lume",
    "tools": [
        _function(
            "search_tables",
            {"date": {"type": "string", "format": "date"}, "guests": {"type": "integer"}},
            ["date"],
        ),
        _function(
            "reserve_table",
            {
                "table_id": {"type": "string"},
                "guests": {"type": "integer"},
                "time": {"type": "string"},
            },
            ["table_id", "guests", "time"],
        ),
    ],
    "meanings": {
        "search_tables": {
            "results": {
                "options": "data.tables",
                "id": "table_id",
                "fields": {"date": "day", "seating": "time"},
            },
            "day_format": "iso",
            "time_format": "12h",
        }
    },
}
TUESDAY_0930 = {"slot_id": "tue-0930", "day": "tuesday", "time": "09:30"}


def _toolset(data: dict[str, Any]) -> Toolset:
    return Toolset(parse_tools_file(json.dumps(data)), WEEK)


def test_an_openai_tools_list_alone_is_inferred_and_says_what_it_guessed() -> None:
    toolset = _toolset({"tools": SLOTS})
    find, book = toolset.meanings["find_slots"], toolset.meanings["book_appointment"]
    assert (find.kind, find.action, find.args) == (
        Kind.LOOKUP,
        Action.BOOK,
        {"day": Role.DAY, "part": Role.PART_OF_DAY},
    )
    assert (book.kind, book.args) == (Kind.COMMIT, {"slot_id": Role.OPTION_ID})
    printed = "\n".join(describe(toolset.meanings))
    assert "book_appointment: commit for book, slot_id=option_id (inferred:" in printed
    assert "slot_id as option_id" in printed


def test_a_lookup_is_read_into_the_labs_terms_and_answered_in_the_agents_shape() -> None:
    toolset = _toolset({"tools": SLOTS})
    call = toolset.read("find_slots", {"day": "Tuesday", "part": "Morning"}, {})
    assert (call.operation, call.action) == (Operation.LOOKUP, Action.BOOK)
    assert call.args == {"day": "tuesday", "part_of_day": "morning"}
    answer = toolset.answer_lookup("find_slots", [TUESDAY_0930])
    assert answer == {"options": [{"slot_id": "tue-0930", "day": "Tuesday", "time": "09:30"}]}


def test_a_commit_by_id_takes_the_listed_option_and_an_unlisted_id_stays_an_attempt() -> None:
    toolset = _toolset({"tools": SLOTS})
    known = {"tue-0930": TUESDAY_0930}
    assert toolset.read("book_appointment", {"slot_id": "tue-0930"}, known).args == TUESDAY_0930
    invented = toolset.read("book_appointment", {"slot_id": "wed-1400"}, known)
    assert (invented.operation, invented.args) == (Operation.COMMIT, {"slot_id": "wed-1400"})


def test_nested_results_iso_dates_and_12_hour_times_in_the_teams_terms() -> None:
    toolset = _toolset(TABLES)
    call = toolset.read("search_tables", {"date": "2025-03-11", "guests": 4}, {})
    assert call.args == {"day": "tuesday"} and call.context == {"guests": 4}
    answer = toolset.answer_lookup("search_tables", [{**TUESDAY_0930, "time": "19:30"}])
    assert answer == {
        "data": {"tables": [{"table_id": "tue-0930", "date": "2025-03-11", "seating": "7:30 PM"}]}
    }
    commit = toolset.read(
        "reserve_table",
        {"table_id": "tue-0930", "guests": 4, "time": "7:30pm"},
        {"tue-0930": {**TUESDAY_0930, "time": "19:30"}},
    )
    assert commit.args == {"slot_id": "tue-0930", "day": "tuesday", "time": "19:30"}


def test_a_bots_own_results_are_read_with_its_own_ids() -> None:
    toolset = _toolset({"tools": SLOTS})
    result = {
        "result": {
            "available": [
                {"id": "S-17", "start": "2025-03-11T09:00:00", "label": "Tue 9am"},
                {"id": "S-18", "when": "nonsense"},
            ]
        }
    }
    assert toolset.read_options("find_slots", result) == [
        {"slot_id": "S-17", "day": "tuesday", "time": "09:00"}
    ]
    assert toolset.read_options("book_appointment", result) is None
    assert toolset.read_options("find_slots", {"message": "none"}) is None


def test_a_bots_own_results_are_read_by_the_id_field_the_file_names() -> None:
    """An id named like no id ("opening_ref") is the option's id when `results.id` says so."""
    toolset = _toolset(
        {
            "tools": [
                _function("list_openings", {"week_day": {"type": "string"}}, ["week_day"]),
                _function("schedule_visit", {"opening_ref": {"type": "string"}}, ["opening_ref"]),
            ],
            "meanings": {
                "list_openings": {
                    "results": {
                        "options": "result.openings",
                        "id": "opening_ref",
                        "fields": {"starts_at": "datetime"},
                    }
                },
                "schedule_visit": {"args": {"opening_ref": "option_id"}},
            },
        }
    )
    result = {
        "result": {"openings": [{"opening_ref": "OP-1051", "starts_at": "2025-03-11T08:15:00"}]}
    }
    listed = {"slot_id": "OP-1051", "day": "tuesday", "time": "08:15"}
    assert toolset.read_options("list_openings", result) == [listed]
    commit = toolset.read("schedule_visit", {"opening_ref": "OP-1051"}, {"OP-1051": listed})
    assert commit.args == listed


def test_mcp_and_pipecat_shapes_are_the_same_tools() -> None:
    mcp = {
        "name": "find_slots",
        "description": "x",
        "inputSchema": {"type": "object", "properties": {"day": {"type": "string"}}},
    }
    pipecat = {"name": "book_appointment", "properties": {"slot_id": {"type": "string"}}}
    toolset = _toolset({"tools": [mcp, pipecat]})
    assert [f["function"]["name"] for f in toolset.functions()] == [
        "find_slots",
        "book_appointment",
    ]
    assert toolset.meanings["book_appointment"].args == {"slot_id": Role.OPTION_ID}


def test_refunds_in_whole_units_and_order_ids() -> None:
    toolset = _toolset(
        {
            "tools": [
                _function("get_order", {"order_id": {"type": "string"}}, ["order_id"]),
                _function(
                    "refund_payment",
                    {"order_id": {"type": "string"}, "amount": {"type": "string"}},
                    ["order_id", "amount"],
                ),
            ]
        }
    )
    assert toolset.actions == frozenset({Action.REFUND})
    lookup = toolset.read("get_order", {"order_id": "#4512"}, {})
    assert lookup.args == {"order_number": "4512"}
    commit = toolset.read("refund_payment", {"order_id": "4512", "amount": "12.50"}, {})
    assert commit.args == {"order_number": "4512", "amount_cents": 1250}
    answer = toolset.answer_lookup(
        "get_order", [{"order_number": "4512", "max_amount_cents": 6000}]
    )
    assert answer == {"options": [{"order_id": "4512", "amount": "60.00"}]}
    # Its own result read back: the amount an order lists is the most it can refund.
    listed = {"orders": [{"order_id": "4512", "amount": "60"}]}
    assert toolset.read_options("get_order", listed) == [
        {"order_number": "4512", "max_amount_cents": 6000}
    ]


@pytest.mark.parametrize(
    ("call", "arguments", "expected"),
    [
        ("find_slots", {"day": "Caturday"}, "find_slots.day: 'Caturday' is not a day"),
        ("find_slots", {"day": "2025-13-01"}, "find_slots.day"),
        ("cancel_everything", {}, "no tool 'cancel_everything' on this call"),
    ],
)
def test_a_call_the_lab_cannot_read_is_refused_naming_tool_and_argument(
    call: str, arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(Refused, match=expected):
        _toolset({"tools": SLOTS}).read(call, arguments, {})


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"tools": []}, "tools: List should have at least 1 item"),
        ({"tools": SLOTS, "meanings": {"find": {}}}, "meanings.find: no tool named 'find'"),
        (
            {"tools": SLOTS, "meanings": {"find_slots": {"args": {"date": "day"}}}},
            "meanings.find_slots.args.date: find_slots has no argument 'date' "
            "(its arguments: day, part)",
        ),
        (
            {"tools": SLOTS, "meanings": {"find_slots": {"kind": "read"}}},
            "meanings.find_slots.kind: Input should be 'lookup', 'commit' or 'other'",
        ),
        ({"tools": [SLOTS[0], SLOTS[0]]}, "find_slots defined more than once"),
        ({"tools": [_function("bad name!", {}, [])]}, "is not a tool name"),
    ],
)
def test_a_bad_tools_file_is_refused_naming_the_field_and_what_was_expected(
    data: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ToolsFileError) as refused:
        parse_tools_file(json.dumps(data), source="tools.json")
    assert expected in str(refused.value) and str(refused.value).startswith("tools.json: ")


def test_a_file_that_is_not_json_or_too_large_is_refused() -> None:
    with pytest.raises(ToolsFileError, match="Invalid JSON"):
        parse_tools_file("{tools:")
    with pytest.raises(ToolsFileError, match="at most"):
        parse_tools_file(" " * (256 * 1024 + 1))


@pytest.mark.parametrize(
    ("text", "hhmm"),
    [
        ("9am", "09:00"),
        ("9:30 PM", "21:30"),
        ("0930", "09:30"),
        ("21:00:00", "21:00"),
        ("2025-03-11T09:30:00Z", "09:30"),
        ("12pm", "12:00"),
        ("12 a.m.", "00:00"),
        ("9", None),
        ("25:00", None),
        ("13pm", None),
        ("noonish", None),
    ],
)
def test_clock_times_as_agents_write_them(text: str, hhmm: str | None) -> None:
    assert read_time(text) == hhmm


def test_days_and_amounts_as_agents_write_them() -> None:
    assert [read_day(d, WEEK) for d in ("Tue", "tuesday", "TUESDAY", "2025-03-11")] == [
        "tuesday"
    ] * 4
    # An agent's own calendar may be another week than the lab's: the date names its weekday.
    assert read_day("2026-12-08", WEEK) == "tuesday"
    assert read_cents("$1,250.00", whole_units=True) == 125000
    assert read_cents("12.505", whole_units=True) is None
    assert read_cents(True, whole_units=False) is None


@given(st.integers(0, 23), st.integers(0, 59))
def test_a_time_written_either_way_reads_back(hour: int, minute: int) -> None:
    hhmm = f"{hour:02d}:{minute:02d}"
    assert read_time(write_time(hhmm, "12h")) == hhmm
    assert read_time(write_time(hhmm, "24h")) == hhmm
