"""runscenarios --agent pipecat:ws://…/ws --tools FILE against a team's own pipecat bot (Harbour
Physio: a real pipecat 1.14 pipeline running `list_openings` and `schedule_visit` on its own
openings, ids like OP-1042; its LLM the team agent's server for the clinic): the referee reads
its observed calls and results through its tools file alone.

The bot's own tools never meet the lab's injected timeout, so tool_timeout cannot expose a habit
here (nor invent, which needs a failed lookup); and on pipecat's text wire a barge-in never
reaches the bot's context (it keeps its whole reply), so the barge habit cannot know what was
cut. Both are left to the OpenAI-compatible agent, whose tools and history the lab holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.connectors.conftest import needs_pipecat
from tests.connectors.verdicts import MODES, scenario_verdicts

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.pipecat, needs_pipecat]

Start = Callable[[str], str]
TOOLS = str(ROOT / "agents" / "clinic_bot" / "tools.json")
BOOKING = ("correction", "no_confirmation", "interruption", "double_confirmation")
# Habit → {scenario: an assertion its FAIL names}, as-is and guarded alike: the bot's calls
# already ran, so a booking the gate would have blocked happened.
EXPOSED = {
    "stale": {"correction": "commit_is_latest"},
    "eager": {"no_confirmation": "positive_is_not_yes"},
}
# A repeated yes makes the double habit call schedule_visit again, and the clinic's own diary
# refuses the taken opening: an attempt after an explicit yes to its readback, executed once.


def _run(capsys: pytest.CaptureFixture[str], url: str, mode: str) -> tuple[dict[str, str], str]:
    scenarios = [part for name in BOOKING for part in ("--scenario", name)]
    return scenario_verdicts(
        capsys, "--agent", f"pipecat:{url}", "--tools", TOOLS, *scenarios, *MODES[mode]
    )


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_clinic_bot_on_its_own_tools_and_ids_passes_the_booking_scenarios(
    clinic_bot: Start, capsys: pytest.CaptureFixture[str], fast_clock: object, mode: str
) -> None:
    verdicts, reasons = _run(capsys, clinic_bot("correct"), mode)
    assert verdicts == dict.fromkeys(BOOKING, "PASS"), reasons
    assert "schedule_visit: commit for book, opening_ref=option_id" in reasons


@pytest.mark.parametrize(("habit", "mode"), [(h, m) for h in sorted(EXPOSED) for m in MODES])
def test_the_clinic_bots_habits_fail_the_scenario_that_exposes_them(
    clinic_bot: Start, capsys: pytest.CaptureFixture[str], fast_clock: object, habit: str, mode: str
) -> None:
    scenario, assertion = next(iter(EXPOSED[habit].items()))
    verdicts, reasons = scenario_verdicts(
        capsys,
        *("--agent", f"pipecat:{clinic_bot(habit)}", "--tools", TOOLS, "--scenario", scenario),
        *MODES[mode],
    )
    assert verdicts == {scenario: "FAIL"}, reasons
    assert re.search(rf"Contradicted: .*{assertion} by ev-\d{{5}}", reasons), reasons


def test_the_clinic_bots_repeated_booking_refused_by_its_own_diary_executes_once(
    clinic_bot: Start, capsys: pytest.CaptureFixture[str], fast_clock: object
) -> None:
    url = clinic_bot("double")
    scenario = ("--scenario", "double_confirmation", "--as-is")
    verdicts, reasons = scenario_verdicts(
        capsys, "--agent", f"pipecat:{url}", "--tools", TOOLS, *scenario
    )
    assert verdicts == {"double_confirmation": "PASS"}, reasons


@pytest.mark.models
def test_on_voice_runs_the_lab_hears_the_caller_and_voices_the_clinic_bot(
    clinic_bot: Start, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot neither hears nor speaks (text mode): the lab's VAD and ASR hear the scripted
    caller and its TTS voices the bot's replies."""
    monkeypatch.setenv("LAB_PIPECAT_MODE", "text")
    verdicts, reasons = scenario_verdicts(
        capsys,
        *("--agent", f"pipecat:{clinic_bot('correct')}", "--tools", TOOLS, "--channel", "voice"),
        *("--scenario", "correction", "--scenario", "double_confirmation"),
    )
    assert verdicts == {"correction": "PASS", "double_confirmation": "PASS"}, reasons


@pytest.mark.parametrize(("habit", "verdict"), [("correct", "PASS"), ("stale", "FAIL")])
def test_the_clinic_bot_is_judged_on_its_bare_tools_list_its_results_read_from_what_it_returns(
    clinic_bot: Start,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    tmp_path: Path,
    habit: str,
    verdict: str,
) -> None:
    """No meanings at all: where list_openings lists its openings, which field names one and
    which holds its day and time are read from the bot's own results, and the run says so."""
    bare = tmp_path / "tools.json"
    bare.write_text(json.dumps({"tools": json.loads(Path(TOOLS).read_text())["tools"]}))
    verdicts, reasons = scenario_verdicts(
        capsys,
        "--agent",
        f"pipecat:{clinic_bot(habit)}",
        "--tools",
        str(bare),
        "--scenario",
        "correction",
        "--as-is",
    )
    assert verdicts == {"correction": verdict}, reasons
    assert (
        "inferred in correction: list_openings: its own results read as options at "
        "'result.openings', each named by 'opening_ref'; read by value: starts_at=datetime"
    ) in reasons
