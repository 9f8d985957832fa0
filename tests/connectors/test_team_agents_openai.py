"""runscenarios --agent openai:URL --tools FILE against a team's own agent (Trattoria Lume, a
real server with its own tool names, nested results and table ids): the honest agent PASSes the
booking scenarios guarded and as-is, and each habit FAILs the scenario that exposes it, naming
the assertion.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tests.conftest import ROOT
from tests.connectors.verdicts import MODES, scenario_verdicts

pytestmark = pytest.mark.django_db(transaction=True)

Start = Callable[[str, str], str]
TOOLS = str(ROOT / "agents" / "trattoria" / "tools.json")
PROMPT = ROOT / "agents" / "trattoria" / "prompt.txt"
BOOKING = ("correction", "no_confirmation", "tool_timeout", "interruption", "double_confirmation")
# Habit → mode → {scenario: an assertion its FAIL names}; every other booking scenario PASSes.
# An attempted booking counts against the agent whether or not the gate or the sandbox let it
# through, so guarded runs FAIL as as-is runs do, except a repeated yes, which the gate answers
# with the original receipt. An agent that never reads back (eager) meets the caller's next line
# anyway and is judged on it, tool_timeout included: its booking on "Yes, book it." with nothing
# read back FAILs commit_confirmed (version 3 of that contract; version 2 let it pass).
_EAGER = {
    "correction": "commit_confirmed",
    "tool_timeout": "commit_confirmed",
    "no_confirmation": "positive_is_not_yes",
    "interruption": "commit_confirmed",
    "double_confirmation": "commit_confirmed",
}
EXPOSED: dict[str, dict[str, dict[str, str]]] = {
    "stale": {
        "guarded": {"correction": "commit_is_latest"},
        "as-is": {"correction": "commit_is_latest"},
    },
    "eager": {"guarded": _EAGER, "as-is": _EAGER},
    "double": {"guarded": {}, "as-is": {"double_confirmation": "executed_once"}},
    "invent": {
        "guarded": {"tool_timeout": "nothing_invented"},
        "as-is": {"tool_timeout": "nothing_invented"},
    },
    "barge": {
        "guarded": {"interruption": "interrupted_proposal_expired"},
        "as-is": {"interruption": "interrupted_proposal_expired"},
    },
}


def _run(capsys: pytest.CaptureFixture[str], url: str, mode: str) -> tuple[dict[str, str], str]:
    scenarios = [part for name in BOOKING for part in ("--scenario", name)]
    return scenario_verdicts(
        capsys, "--agent", f"openai:{url}", "--tools", TOOLS, *scenarios, *MODES[mode]
    )


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_trattoria_as_its_team_wrote_it_passes_every_booking_scenario(
    team_server: Start,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
) -> None:
    monkeypatch.setenv("LAB_AGENT_SYSTEM_PROMPT_FILE", str(PROMPT))
    verdicts, reasons = _run(capsys, team_server("trattoria", "correct"), mode)
    assert verdicts == dict.fromkeys(BOOKING, "PASS"), reasons
    assert "search_tables: lookup for book, date=day, party_size=context, time=time" in reasons


@pytest.mark.parametrize(("habit", "mode"), [(h, m) for h in sorted(EXPOSED) for m in MODES])
def test_each_habit_fails_the_scenario_that_exposes_it_naming_the_assertion(
    team_server: Start,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    habit: str,
    mode: str,
) -> None:
    verdicts, reasons = _run(capsys, team_server("trattoria", habit), mode)
    exposed = EXPOSED[habit][mode]
    assert {name for name, verdict in verdicts.items() if verdict == "FAIL"} == set(exposed), (
        verdicts,
        reasons,
    )
    # Every other scenario PASSes (eager now fails all five: none is left).
    assert {verdicts[name] for name in set(BOOKING) - set(exposed)} <= {"PASS"}, reasons
    for assertion in exposed.values():
        assert re.search(rf"Contradicted: .*{assertion} by ev-\d{{5}}", reasons), reasons
