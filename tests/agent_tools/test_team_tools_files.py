"""The team agents' tools files (agents/*/tools.json) as written, and what inference alone makes
of their tools lists: where it agrees, and the parts only the file can say."""

from __future__ import annotations

import json

from lab.agent_tools.inference import describe
from lab.agent_tools.loading import parse_tools_file
from lab.agent_tools.schema import Role
from lab.agent_tools.toolset import Toolset
from lab.scripted.setup import calendar_week
from tests.conftest import ROOT

WEEK = calendar_week()


def _toolsets(agent: str) -> tuple[Toolset, Toolset]:
    """The file as written, and its tools list alone (every meaning inferred)."""
    text = (ROOT / "agents" / agent / "tools.json").read_text()
    bare = {"tools": json.loads(text)["tools"]}
    return Toolset(parse_tools_file(text), WEEK), Toolset(parse_tools_file(json.dumps(bare)), WEEK)


def _roles(toolset: Toolset) -> dict[str, tuple[str, str, dict[str, Role]]]:
    return {name: (m.kind, m.action, m.args) for name, m in toolset.meanings.items()}


def test_inference_alone_reads_the_trattorias_tools_as_its_file_does_but_not_its_results() -> None:
    written, inferred = _toolsets("trattoria")
    print("\n".join(["inferred from the trattoria's tools list:", *describe(inferred.meanings)]))
    assert _roles(inferred) == _roles(written)
    # Where search_tables nests its tables and how it writes dates and times is not in an
    # OpenAI tools list: inferred, the lab would answer in its own flat shape.
    option = {"slot_id": "tue-0930", "day": "tuesday", "time": "09:30"}
    assert written.answer_lookup("search_tables", [option]) == {
        "data": {"tables": [{"table_id": "tue-0930", "date": "2025-03-11", "seating": "9:30 AM"}]}
    }
    assert inferred.answer_lookup("search_tables", [option]) == {
        "options": [{"table_id": "tue-0930", "date": "Tuesday", "time": "09:30"}]
    }


def test_inference_alone_reads_the_clinics_tools_and_its_own_results_as_its_file_does() -> None:
    written, inferred = _toolsets("clinic_bot")
    print("\n".join(["inferred from the clinic's tools list:", *describe(inferred.meanings)]))
    assert _roles(inferred) == _roles(written)
    # "opening_ref" is an id by its name; where the bot's own result lists the openings, and
    # what each field holds, is read from the result itself.
    assert inferred.meanings["schedule_visit"].args == {"opening_ref": Role.OPTION_ID}
    result = {
        "result": {"openings": [{"opening_ref": "OP-1051", "starts_at": "2025-03-11T08:15:00"}]}
    }
    listed = [{"slot_id": "OP-1051", "day": "tuesday", "time": "08:15"}]
    assert written.read_options("list_openings", result) == listed
    assert inferred.read_options("list_openings", result) == listed
    read = inferred.results_read("list_openings", result)
    assert read is not None and (read.options, read.id) == ("result.openings", "opening_ref")
    assert written.results_read("list_openings", result) is None  # the file says; nothing inferred
