"""checktools FILE: how the lab reads an agent's tools file, before any run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from lab.agent_tools.inference import describe
from lab.web.management.agent_tools import today_line, toolset_from


class Command(BaseCommand):
    help = "Read a tools file and print what each tool means to the lab, marking what was inferred."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tools", type=Path, metavar="FILE")

    def handle(self, *args: Any, **options: Any) -> None:
        toolset = toolset_from(options["tools"])
        business = toolset.file.business or "(no business named)"
        self.stdout.write(f"{business}: {len(toolset.meanings)} tools, sha256 {toolset.digest}")
        if today := today_line(toolset):
            self.stdout.write(today)
        for line in describe(toolset.meanings):
            self.stdout.write(f"  {line}")
        actions = ", ".join(sorted(str(action) for action in toolset.actions)) or "none"
        self.stdout.write(f"material actions the scenarios can exercise: {actions}")
