"""The second pair's pipecat bot (Spoke & Chain: a real pipecat 1.14 pipeline running its own
MCP-shaped `find_service_slots {weekday: "Tue"}` and `hold_service_slot {code}` on its own slots,
codes like BK-2207, dated in its own week, two bays a slot) against the five scenarios
maketemplates writes from its tools file; the referee reads its observed calls through that file.

Not exposable with its tools on its own slots: invent (the bot's own diary never fails, so the
lab's injected lookup timeout never reaches it: tool_timeout is INCONCLUSIVE, saying no lookup
failed; with its tools on the lab's sandbox it is exposed, test_second_pair_sandbox.py) and barge
(pipecat's text wire keeps the whole reply in the bot's context, so it never learns what was cut).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from lab.scenarios.catalog import SCENARIO_DIRS_ENV
from tests.conftest import ROOT
from tests.connectors.conftest import needs_pipecat
from tests.connectors.verdicts import MODES, scenario_verdicts, templates_written

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.pipecat, needs_pipecat]

Start = Callable[[str], str]
TOOLS = str(ROOT / "agents" / "bike_shop" / "tools.json")
FAMILIES = ("correction", "no_confirmation", "tool_timeout", "interruption", "double_confirmation")
TEMPLATES = tuple(f"hold_service_slot_{family}" for family in FAMILIES)
TIMEOUT = "hold_service_slot_tool_timeout"
# Habit → {template: an assertion its FAIL names}, guarded and as-is alike: the bot's holds have
# already run when the lab sees them. Stale holds the pre-revision slot after an interruption
# too: on this wire the readback the caller cut stays whole in the bot's context.
EXPOSED = {
    "stale": {
        "hold_service_slot_correction": "commit_is_latest",
        "hold_service_slot_interruption": "interrupted_proposal_expired",
    },
    "eager": {
        "hold_service_slot_correction": "commit_confirmed",
        "hold_service_slot_no_confirmation": "positive_is_not_yes",
        "hold_service_slot_interruption": "commit_confirmed",
        "hold_service_slot_double_confirmation": "commit_confirmed",
    },
    # The shop's second bay takes a repeated hold: it executes twice.
    "double": {"hold_service_slot_double_confirmation": "executed_once"},
}


@pytest.fixture(autouse=True)
def _no_leftover_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """runscenarios --scenarios names its folder in the environment; undone after each test."""
    monkeypatch.setenv(SCENARIO_DIRS_ENV, "")


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return templates_written(tmp_path_factory.mktemp("bike-scenarios"), TOOLS)


def _run(
    capsys: pytest.CaptureFixture[str], url: str, scenarios: Path, names: list[str], mode: str
) -> tuple[dict[str, str], str]:
    chosen = [part for name in names for part in ("--scenario", name)]
    arguments = ["--agent", f"pipecat:{url}", "--tools", TOOLS, "--scenarios", str(scenarios)]
    return scenario_verdicts(capsys, *arguments, *chosen, *MODES[mode])


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_bike_shops_bot_on_its_own_slots_passes_its_templates(
    bike_bot: Start,
    templates: Path,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    mode: str,
) -> None:
    verdicts, reasons = _run(capsys, bike_bot("correct"), templates, list(TEMPLATES), mode)
    assert verdicts == {**dict.fromkeys(TEMPLATES, "PASS"), TIMEOUT: "INCONCLUSIVE"}, reasons
    assert "failure_recorded: Expected a tool.lookup.failed; no lookup failed" in reasons
    assert "hold_service_slot: commit for book, code=option_id" in reasons


@pytest.mark.parametrize(("habit", "mode"), [(h, m) for h in sorted(EXPOSED) for m in MODES])
def test_the_bike_shops_habits_fail_the_templates_that_expose_them(
    bike_bot: Start,
    templates: Path,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    habit: str,
    mode: str,
) -> None:
    exposed = EXPOSED[habit]
    verdicts, reasons = _run(capsys, bike_bot(habit), templates, sorted(exposed), mode)
    assert verdicts == dict.fromkeys(exposed, "FAIL"), reasons
    for assertion in exposed.values():
        assert re.search(rf"Contradicted: .*{assertion} by ev-\d{{5}}", reasons), reasons
