"""The second pair's OpenAI-compatible agent (Fern & Shears, a salon written from the README
alone: `check_availability {date, period, stylist}` with ISO dates on its own calendar,
`{"payload": {"chairs": [...]}}` results, `confirm_booking {chair_ref, client_name}` after asking
the client's name) against the five scenarios maketemplates writes from its tools file: the
honest desk PASSes each, guarded and as-is, and each habit FAILs the one that exposes it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from lab.scenarios.catalog import SCENARIO_DIRS_ENV
from tests.conftest import ROOT
from tests.connectors.verdicts import MODES, scenario_verdicts, templates_written

pytestmark = pytest.mark.django_db(transaction=True)

Start = Callable[[str, str], str]
TOOLS = str(ROOT / "agents" / "salon" / "tools.json")
FAMILIES = ("correction", "no_confirmation", "tool_timeout", "interruption", "double_confirmation")
TEMPLATES = tuple(f"confirm_booking_{family}" for family in FAMILIES)
# Habit → mode → {scenario: an assertion its FAIL names}; every other template PASSes. As for the
# first pair: a repeated yes is answered by the gate with the first receipt (guarded double
# PASSes).
_EAGER = {
    "confirm_booking_correction": "commit_confirmed",
    "confirm_booking_tool_timeout": "commit_confirmed",
    "confirm_booking_no_confirmation": "positive_is_not_yes",
    "confirm_booking_interruption": "commit_confirmed",
    "confirm_booking_double_confirmation": "commit_confirmed",
}


def _both(exposed: dict[str, str]) -> dict[str, dict[str, str]]:
    return {"guarded": exposed, "as-is": exposed}


EXPOSED: dict[str, dict[str, dict[str, str]]] = {
    "stale": _both({"confirm_booking_correction": "commit_is_latest"}),
    "eager": _both(_EAGER),
    "double": {"guarded": {}, "as-is": {"confirm_booking_double_confirmation": "executed_once"}},
    "invent": _both({"confirm_booking_tool_timeout": "nothing_invented"}),
    "barge": _both({"confirm_booking_interruption": "interrupted_proposal_expired"}),
}


@pytest.fixture(autouse=True)
def _no_leftover_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """runscenarios --scenarios names its folder in the environment; undone after each test."""
    monkeypatch.setenv(SCENARIO_DIRS_ENV, "")


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The five scenarios maketemplates writes for the salon's tools file, unedited."""
    out = templates_written(tmp_path_factory.mktemp("salon-scenarios"), TOOLS)
    assert sorted(path.stem for path in out.glob("*.json")) == sorted(TEMPLATES)
    return out


def _run(
    capsys: pytest.CaptureFixture[str], url: str, scenarios: Path, mode: str
) -> tuple[dict[str, str], str]:
    """Each template's verdict from runscenarios' stdout, and its stderr (the reasons)."""
    chosen = [part for name in TEMPLATES for part in ("--scenario", name)]
    arguments = ["--agent", f"openai:{url}", "--tools", TOOLS, "--scenarios", str(scenarios)]
    return scenario_verdicts(capsys, *arguments, *chosen, *MODES[mode])


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_salon_as_its_team_wrote_it_passes_its_five_templates(
    second_pair_server: Start,
    templates: Path,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    mode: str,
) -> None:
    verdicts, reasons = _run(capsys, second_pair_server("salon", "correct"), templates, mode)
    assert verdicts == dict.fromkeys(TEMPLATES, "PASS"), reasons
    assert "confirm_booking: commit for book, chair_ref=option_id, client_name=context" in reasons


@pytest.mark.parametrize(("habit", "mode"), [(h, m) for h in sorted(EXPOSED) for m in MODES])
def test_each_salon_habit_fails_the_template_that_exposes_it_naming_the_assertion(
    second_pair_server: Start,
    templates: Path,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    habit: str,
    mode: str,
) -> None:
    verdicts, reasons = _run(capsys, second_pair_server("salon", habit), templates, mode)
    exposed = EXPOSED[habit][mode]
    failed = {name for name, verdict in verdicts.items() if verdict == "FAIL"}
    assert failed == set(exposed), (verdicts, reasons)
    # Every template the habit does not fail PASSes (eager fails them all).
    assert {verdicts[name] for name in set(TEMPLATES) - set(exposed)} <= {"PASS"}, reasons
    for assertion in exposed.values():
        assert re.search(rf"Contradicted: .*{assertion} by ev-\d{{5}}", reasons), reasons
