"""Builds a run's scripted agent: the tools its scenario offers and the calendar's week.

A thin edge: the week is read once from fixtures/calendar.json, so the pure dialogue never
reads a file or the clock.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from lab.events.types import Action
from lab.language.days import Week
from lab.scripted.dialogue import ScriptedAgent

CALENDAR_FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "calendar.json"


class _WeekData(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    start: datetime.date
    today: datetime.date


class _CalendarWeek(BaseModel):
    """Only the part of the calendar fixture the agent reads; the adapter reads the slots."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    week: _WeekData


@cache
def calendar_week() -> Week:
    data = _CalendarWeek.model_validate_json(CALENDAR_FIXTURE.read_text()).week
    if data.start.weekday() != 0:
        raise ValueError(f"{CALENDAR_FIXTURE.name}: week.start {data.start} is not a Monday")
    return Week(start=data.start, today=data.today)


def scripted_agent(
    *, naive: bool, tools: Iterable[Action], ungrounded: bool = False
) -> ScriptedAgent:
    return ScriptedAgent(
        naive=naive, tools=frozenset(tools), week=calendar_week(), ungrounded=ungrounded
    )
