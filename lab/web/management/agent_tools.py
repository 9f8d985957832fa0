"""A tools file named on the command line, read and checked, or a CommandError saying why."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from lab.agent_tools.loading import ToolsFileError, parse_tools_file
from lab.agent_tools.observed import describe_results
from lab.agent_tools.schema import Results
from lab.agent_tools.toolset import Toolset
from lab.events.types import Event, LookupSucceeded
from lab.scripted.setup import calendar_week


def toolset_from(path: Path) -> Toolset:
    try:
        return Toolset(parse_tools_file(path.read_bytes(), source=str(path)), calendar_week())
    except OSError as error:
        raise CommandError(f"--tools: {error}") from None
    except ToolsFileError as error:
        raise CommandError(f"--tools: {error}") from None


def today_line(toolset: Toolset) -> str | None:
    """What the file's own `today` sets, for checktools and runscenarios to print."""
    week = toolset.week
    if toolset.file.today is None or week is None:
        return None
    return f"today {toolset.file.today}: its days are read in the week of {week.span()}"


def results_read(events: list[Event]) -> list[str]:
    """Where each lookup's own results were read from, once per reading, as inferred in the run
    (a tools file with no `results` for it)."""
    lines: list[str] = []
    for event in events:
        payload = event.payload
        if isinstance(payload, LookupSucceeded) and payload.results_read:
            read = dict(payload.results_read)
            tool = read.pop("tool", "?")
            line = f"{tool}: its own results read as {describe_results(Results(**read))}"
            if line not in lines:
                lines.append(line)
    return lines
