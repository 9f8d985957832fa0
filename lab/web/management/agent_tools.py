"""A tools file named on the command line, read and checked, or a CommandError saying why."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from lab.agent_tools.loading import ToolsFileError, parse_tools_file
from lab.agent_tools.toolset import Toolset
from lab.scripted.setup import calendar_week


def toolset_from(path: Path) -> Toolset:
    try:
        return Toolset(parse_tools_file(path.read_bytes(), source=str(path)), calendar_week())
    except OSError as error:
        raise CommandError(f"--tools: {error}") from None
    except ToolsFileError as error:
        raise CommandError(f"--tools: {error}") from None
