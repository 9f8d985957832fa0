"""The five failure families written out for a team's own actions, and played as any scenario."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from lab.agent_tools.loading import parse_tools_file
from lab.agent_tools.toolset import Toolset
from lab.scenarios import catalog
from lab.scenarios.persona import DEFAULT_PERSONA
from lab.scenarios.templates import FAMILIES, Templates, generate, words_of
from lab.scripted.setup import calendar_week
from lab.web.management.commands.maketemplates import TEMPLATES_FILE


def _tool(name: str, **properties: str) -> dict[str, object]:
    schema = {key: {"type": kind} for key, kind in properties.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"properties": schema}}}


TOOLS = {
    "business": "Trattoria Lume",
    "tools": [
        _tool("search_tables", date="string", party_size="integer"),
        _tool("reserve_table", table_id="string", guests="integer", time="string"),
        _tool("get_order", order_id="string"),
        _tool("refund_order", order_id="string", amount="string"),
    ],
}


def _toolset() -> Toolset:
    return Toolset(parse_tools_file(json.dumps(TOOLS)), calendar_week())


def test_each_material_action_gets_the_five_families_in_its_own_words() -> None:
    templates = Templates.model_validate_json(TEMPLATES_FILE.read_text())
    contracts = generate(_toolset(), templates)
    assert [c.id for c in contracts] == [
        *(f"reserve_table_{family}" for family in FAMILIES),
        *(f"refund_order_{family}" for family in FAMILIES),
    ]
    correction = contracts[0]
    assert correction.caller[0].say == "Hi, I'd like to reserve a table for Tuesday morning."
    assert correction.tools == ("calendar",) and "Trattoria Lume" in correction.title
    assert contracts[5].tools == ("ledger",)
    # The persona the caller answers an agent's questions from is written out, for the team to
    # edit: a FAIL after the agent asked a name is the agent's, not a caller fault.
    assert {c.persona for c in contracts} == {DEFAULT_PERSONA}
    # The meaning stays the lab's, whatever the words: the referee judges what was meant.
    assert [line.means.kind for line in correction.caller if line.means] == [
        "request",
        "correction",
        "confirmation",
    ]
    no_placeholder_left = json.dumps([c.model_dump(mode="json") for c in contracts])
    assert "{" + "verb}" not in no_placeholder_left and "{thing}" not in no_placeholder_left


def test_words_come_from_the_tool_name() -> None:
    meanings = _toolset().meanings
    assert words_of(meanings["reserve_table"], "") == {
        "verb": "reserve",
        "Verb": "Reserve",
        "thing": "a table",
        "business": "your business",
        "tool_name": "reserve_table",
    }
    assert words_of(meanings["refund_order"], "x")["thing"] == "an order"


def test_maketemplates_writes_loadable_contracts_and_never_overwrites_silently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    out = tmp_path / "scenarios"
    call_command("maketemplates", "--tools", str(tools), "--out", str(out))
    written = sorted(path.stem for path in out.glob("*.json"))
    assert len(written) == 10 and "reserve_table_interruption" in written
    assert catalog.contract_from_file(out / "refund_order_correction.json").version == 1
    with pytest.raises(CommandError, match="exists; edit it, or pass --force"):
        call_command("maketemplates", "--tools", str(tools), "--out", str(out))
    lookups_only = tmp_path / "lookups.json"
    lookups_only.write_text(json.dumps({"tools": [TOOLS["tools"][0]]}))
    with pytest.raises(CommandError, match="no tool is a material action"):
        call_command("maketemplates", "--tools", str(lookups_only), "--out", str(out))


def test_team_scenarios_load_beside_the_labs_and_may_not_take_its_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = json.loads((catalog.SCENARIO_DIR / "correction.json").read_text())
    (tmp_path / "team_correction.json").write_text(json.dumps({**own, "id": "team_correction"}))
    monkeypatch.setenv(catalog.SCENARIO_DIRS_ENV, str(tmp_path))
    assert catalog.contract_get("team_correction").title == own["title"]
    assert "correction" in catalog.all_contracts() and "team_correction" in catalog.all_contracts()
    (tmp_path / "correction.json").write_text(json.dumps(own))
    monkeypatch.setenv(catalog.SCENARIO_DIRS_ENV, f"{tmp_path}{':'}")
    with pytest.raises(ValueError, match="scenario id 'correction' is already taken"):
        catalog.all_contracts()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("mode", "verdict"), [((), "PASS"), (("--unguarded",), "FAIL")])
def test_the_labs_own_agent_passes_every_generated_scenario_and_fails_them_unguarded(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    mode: tuple[str, ...],
    verdict: str,
) -> None:
    monkeypatch.setenv(catalog.SCENARIO_DIRS_ENV, "")  # runscenarios --scenarios sets it
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    out = tmp_path / "scenarios"
    call_command("maketemplates", "--tools", str(tools), "--out", str(out))
    capsys.readouterr()
    names = [arg for path in sorted(out.glob("*.json")) for arg in ("--scenario", path.stem)]
    try:
        call_command("runscenarios", "--scenarios", str(out), *names, *mode, "--time-scale", "0.05")
    except SystemExit as exit_info:
        assert exit_info.code == 1
    captured = capsys.readouterr()
    verdicts = dict(line.split() for line in captured.out.splitlines() if line.strip())
    assert len(verdicts) == 10
    assert set(verdicts.values()) == {verdict}, captured.err


def test_checktools_prints_what_each_tool_means_and_refuses_a_bad_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    call_command("checktools", str(tools))
    out = capsys.readouterr().out
    assert out.startswith("Trattoria Lume: 4 tools, sha256 ")
    assert "  reserve_table: commit for book, table_id=option_id, guests=context" in out
    assert out.rstrip().endswith("material actions the scenarios can exercise: book, refund")
    tools.write_text(json.dumps({**TOOLS, "meanings": {"reserve_table": {"kind": "write"}}}))
    with pytest.raises(CommandError, match=r"--tools: .*meanings.reserve_table.kind: Input"):
        call_command("checktools", str(tools))


@pytest.mark.django_db(transaction=True)
def test_runscenarios_run_again_in_one_process_reads_the_same_folder_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run over the same --scenarios folder must not find its scenarios taken by the
    first run's copy of the same folder."""
    monkeypatch.setenv(catalog.SCENARIO_DIRS_ENV, "")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    out = tmp_path / "scenarios"
    call_command("maketemplates", "--tools", str(tools), "--out", str(out))
    first = sorted(out.glob("*.json"))[0].stem
    for _ in range(2):
        capsys.readouterr()
        call_command(
            "runscenarios", "--scenarios", str(out), "--scenario", first, "--time-scale", "0.05"
        )
        assert capsys.readouterr().out.split()[:2] == [first, "PASS"]
