"""A scenario line meaning an action neither the lab nor the tools file knows ("bok" for "book")
is refused before anything plays, naming the line, the field and the known actions."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from lab.agent_tools.loading import parse_tools_file
from lab.agent_tools.toolset import Toolset
from lab.events.actions import LAB_ACTIONS
from lab.events.models import Run
from lab.events.types import Action
from lab.scenarios import catalog
from lab.scenarios.contracts import Contract
from lab.scripted.setup import calendar_week
from tests.scenarios.test_templates import TOOLS, _tool

CANCEL_TOOLS = {
    **TOOLS,
    "tools": [*TOOLS["tools"], _tool("cancel_table", table_id="string")],
    "actions": {"cancel": "slot"},
    "meanings": {"cancel_table": {"kind": "commit", "action": "cancel"}},
}
WHERE = r"caller\[1\]\.means\.action 'bok' .* known: book, refund"


def _typo(scenario_id: str = "team_typo") -> dict[str, object]:
    """The lab's correction scenario with its correction meaning "bok"."""
    own = json.loads((catalog.SCENARIO_DIR / "correction.json").read_text())
    own["caller"][1]["means"]["action"] = "bok"
    return {**own, "id": scenario_id}


def test_a_typod_action_is_named_by_line_field_and_the_known_actions() -> None:
    contract = Contract.model_validate(_typo())
    [problem] = contract.unknown_actions(frozenset(LAB_ACTIONS))
    assert problem.startswith("caller[1].means.action 'bok' (")
    assert problem.endswith("known: book, refund")
    assert catalog.contract_get("correction").unknown_actions(frozenset(LAB_ACTIONS)) == []


def test_an_action_the_tools_file_declares_is_known_and_a_typo_of_it_is_not() -> None:
    toolset = Toolset(parse_tools_file(json.dumps(CANCEL_TOOLS)), calendar_week())
    assert {Action.BOOK, Action.REFUND, Action("cancel")} <= toolset.known_actions
    cancel = _typo()
    cancel["caller"][1]["means"]["action"] = "cancel"  # type: ignore[index]
    assert Contract.model_validate(cancel).unknown_actions(toolset.known_actions) == []
    assert Contract.model_validate(cancel).unknown_actions(frozenset(LAB_ACTIONS))
    cancel["caller"][1]["means"]["action"] = "cancle"  # type: ignore[index]
    [problem] = Contract.model_validate(cancel).unknown_actions(toolset.known_actions)
    assert problem.endswith("known: book, cancel, refund")


@pytest.mark.django_db
def test_runscenarios_refuses_a_folder_with_a_typod_action_before_anything_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(catalog.SCENARIO_DIRS_ENV, "")  # runscenarios --scenarios sets it
    (tmp_path / "team_typo.json").write_text(json.dumps(_typo()))
    with pytest.raises(CommandError, match=f"team_typo: {WHERE}"):
        call_command("runscenarios", "--scenarios", str(tmp_path), "--time-scale", "0.05")
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_the_picker_refuses_a_scenario_with_a_typod_action(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "team_typo.json").write_text(json.dumps(_typo()))
    monkeypatch.setenv(catalog.SCENARIO_DIRS_ENV, str(tmp_path))
    for repeat in ("1", "3"):
        response = Client().post(
            "/runs/", {"scenario": "team_typo", "channel": "typed", "repeat": repeat}
        )
        assert response.status_code == 400
        page = html.unescape(response.content.decode())
        assert "The run could not start: caller[1].means.action 'bok'" in page
        assert "known: book, refund" in page
    assert not Run.objects.exists()
