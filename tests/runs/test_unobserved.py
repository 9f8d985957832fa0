"""A phone call with no tool call at the lab says its actions were not observed."""

from __future__ import annotations

from datetime import UTC, datetime

from lab.events.chain import EventChain
from lab.events.types import CallerUtterance, Event, ToolCallInvalid
from lab.runs.unobserved import actions_unobserved

AT = datetime(2026, 12, 6, tzinfo=UTC)


def _log(*payloads: object) -> list[Event]:
    chain = EventChain()
    return [chain.append(payload, at=AT) for payload in payloads]  # type: ignore[arg-type]


def test_a_call_no_tool_call_reached_is_a_fault_that_says_actions_were_not_observed() -> None:
    fault = actions_unobserved(_log(CallerUtterance(text="Book Tuesday", source="script")))
    assert fault is not None and fault.fault_kind == "unobserved"
    assert fault.reason.startswith("actions not observed")


def test_any_tool_call_at_the_lab_even_a_refused_one_is_observed() -> None:
    refused = ToolCallInvalid(call_id="c1", name="book", reason="no such slot")
    assert actions_unobserved(_log(refused)) is None
