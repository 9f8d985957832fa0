"""maketemplates --tools FILE --out DIR: the five failure-family scenarios for each material
action of an agent's tools file, written as contracts the team can edit and run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.scenarios.catalog import SCENARIO_DIR, contract_from_file
from lab.scenarios.templates import Templates, generate
from lab.web.management.agent_tools import toolset_from

TEMPLATES_FILE = SCENARIO_DIR / "templates" / "families.json"


class Command(BaseCommand):
    help = "Write the five failure-family scenarios for each material action of a tools file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tools", type=Path, required=True, metavar="FILE")
        parser.add_argument("--out", type=Path, required=True, metavar="DIR")
        parser.add_argument(
            "--force", action="store_true", help="overwrite scenario files already in DIR"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["tools"]
        toolset = toolset_from(path)
        templates = Templates.model_validate_json(TEMPLATES_FILE.read_text())
        contracts = generate(toolset, templates)
        if not contracts:
            raise CommandError(
                f"{path}: no tool is a material action (kind commit), so no scenario"
            )
        out: Path = options["out"]
        out.mkdir(parents=True, exist_ok=True)
        for contract in contracts:
            target = out / f"{contract.id}.json"
            if target.exists() and not options["force"]:
                raise CommandError(f"{target} exists; edit it, or pass --force to overwrite it")
            data = contract.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
            target.write_text(json.dumps({"id": contract.id, **data}, indent=2) + "\n")
            contract_from_file(target)  # what was written loads as any scenario does
            self.stdout.write(f"{target} {contract.title}")
