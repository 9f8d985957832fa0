"""A tools file's own `today`: the date its business's days are relative to. The day readers
resolve "tomorrow", weekday names and ISO dates against it; a bad one is refused clearly."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from lab.agent_tools.loading import ToolsFileError, parse_tools_file
from lab.agent_tools.toolset import Toolset
from lab.scripted.setup import calendar_week
from tests.agent_tools.test_toolset import SLOTS

LAB_WEEK = calendar_week()  # Monday 2025-03-10, today Sunday 2025-03-09


def _toolset(**extra: Any) -> Toolset:
    return Toolset(parse_tools_file(json.dumps({"tools": SLOTS, **extra})), LAB_WEEK)


def test_without_today_the_labs_calendar_is_kept() -> None:
    toolset = _toolset()
    assert toolset.week == LAB_WEEK and toolset.file.today is None
    assert toolset.read("find_slots", {"day": "tomorrow"}, {}).args == {"day": "monday"}
    assert toolset.read("find_slots", {"day": "2025-03-11"}, {}).args == {"day": "tuesday"}


def test_a_files_today_sets_the_week_its_dates_and_tomorrow_are_read_in() -> None:
    toolset = _toolset(today="2026-12-08")  # a Tuesday
    assert toolset.week is not None
    assert (toolset.week.start, toolset.week.today) == (date(2026, 12, 7), date(2026, 12, 8))
    assert toolset.read("find_slots", {"day": "tomorrow"}, {}).args == {"day": "wednesday"}
    assert toolset.read("find_slots", {"day": "2026-12-11"}, {}).args == {"day": "friday"}
    assert toolset.read("find_slots", {"day": "Thursday"}, {}).args == {"day": "thursday"}
    # The lab calendar's dates are another week to this business: not a day it can book.
    with pytest.raises(ValueError, match="'2025-03-11' is not a day"):
        toolset.read("find_slots", {"day": "2025-03-11"}, {})
    # Its own results are read against it too.
    result = {"slots": [{"slot_id": "A", "start": "2026-12-10T09:00:00"}]}
    assert toolset.read_options("find_slots", result) == [
        {"slot_id": "A", "day": "thursday", "time": "09:00"}
    ]


@pytest.mark.parametrize(
    ("today", "monday"),
    [("2025-03-09", "2025-03-10"), ("2025-03-14", "2025-03-17"), ("2025-03-15", "2025-03-17")],
)
def test_a_weekend_or_friday_today_books_the_week_after(today: str, monday: str) -> None:
    week = _toolset(today=today).week
    assert week is not None and week.start.isoformat() == monday


@pytest.mark.parametrize("today", ["2025-02-30", "tomorrow", "2025-3-9", "20250309"])
def test_a_bad_today_is_refused_naming_the_field(today: str) -> None:
    with pytest.raises(ToolsFileError, match=rf"today: '{today}' is not an ISO date"):
        parse_tools_file(json.dumps({"tools": SLOTS, "today": today}))


def test_checktools_prints_the_files_today_and_its_week(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"business": "Clinic", "tools": SLOTS, "today": "2026-12-08"}))
    call_command("checktools", str(path))
    out = capsys.readouterr().out
    assert (
        "today 2026-12-08: its days are read in the week of Monday, December 7 to Friday, "
        "December 11" in out
    )
    path.write_text(json.dumps({"tools": SLOTS, "today": "next week"}))
    with pytest.raises(CommandError, match=r"--tools: .*today: 'next week' is not an ISO date"):
        call_command("checktools", str(path))
