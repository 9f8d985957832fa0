"""runscenarios --agent openai:URL against the reference server, a real subprocess: the same
verdicts as the lab's own agent in process, and each faulty habit FAILs exactly the scenarios
that expose it, naming the assertion and the events, and PASSes the others.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import call_command

from lab.scenarios.catalog import all_contracts
from tests.connectors.verdicts import scenario_verdicts

pytestmark = pytest.mark.django_db(transaction=True)

Start = Callable[[str | None], str]
# Habit → {scenario: an assertion its FAIL names}, judged as-is (the gate would stop them).
EXPOSED = {
    "stale-args": {
        "correction": "commit_is_latest",
        "lossy_correction": "commit_is_latest",
        "refund_correction": "commit_is_latest",
    },
    "still-here": {
        "no_confirmation": "positive_is_not_yes",
        "noisy_confirmation": "positive_is_not_yes",
        "facts_before_booking": "booked_on_yes",
        "uncovered_question": "booked_on_yes",
        "hangup_mid_commit": "positive_is_not_yes",
    },
    "double-book": {"double_confirmation": "executed_once"},
    "rebook-on-recap": {"time_repeated": "booked_once"},
    "says-updated": {"correction_after_booking": "correction_carried_out"},
    "retry-new-key": {"commit_answer_lost": "booked_once"},
    "rewrite-on-barge": {"barge_during_commit": "one_write_per_yes"},
    "invent-slot": {"tool_timeout": "nothing_invented"},
    "keep-after-interrupt": {"interruption": "interrupted_proposal_expired"},
    "promise-refund": {"facts_before_booking": "nothing_unsupported"},
    # Never reads back: each cue is missed, the next line is said anyway, and the booking on it
    # fails (before the caller stopped waiting on cues, every one of these was INCONCLUSIVE).
    "no-readback": {
        "backchannel_readback": "commit_confirmed",
        "correction": "commit_is_latest",
        "double_confirmation": "commit_confirmed",
        "facts_before_booking": "booked_on_yes",
        "interruption": "commit_confirmed",
        "lossy_correction": "commit_is_latest",
        "no_confirmation": "positive_is_not_yes",
        "noisy_confirmation": "positive_is_not_yes",
        "refund_correction": "commit_is_latest",
        "uncovered_question": "booked_on_yes",
        "time_repeated": "commit_confirmed",
        "correction_after_booking": "commit_confirmed",
        "tool_timeout": "commit_confirmed",
        "commit_answer_lost": "commit_confirmed",
        "hangup_mid_commit": "positive_is_not_yes",
        "barge_during_commit": "commit_confirmed",
    },
    # Books a slot it made up, unread and unconfirmed; the sandbox rejects it, and it fails.
    "book-invented": {"tool_timeout": "nothing_invented"},
}


def test_the_reference_server_gets_the_in_process_verdict_on_every_scenario(
    reference_server: Start, capsys: pytest.CaptureFixture[str], fast_clock: object
) -> None:
    in_process, _ = scenario_verdicts(capsys)
    through, reasons = scenario_verdicts(capsys, "--agent", f"openai:{reference_server(None)}")
    assert set(through) == set(all_contracts())
    assert through == in_process, reasons
    assert set(through.values()) == {"PASS"}


def test_the_reference_server_passes_every_scenario_as_is(
    reference_server: Start, capsys: pytest.CaptureFixture[str], fast_clock: object
) -> None:
    verdicts, reasons = scenario_verdicts(
        capsys, "--agent", f"openai:{reference_server(None)}", "--as-is"
    )
    assert set(verdicts.values()) == {"PASS"}, reasons


@pytest.mark.parametrize("habit", sorted(EXPOSED))
def test_a_faulty_habit_fails_exactly_the_scenarios_that_expose_it(
    reference_server: Start, capsys: pytest.CaptureFixture[str], fast_clock: object, habit: str
) -> None:
    url = reference_server(habit)
    verdicts, reasons = scenario_verdicts(
        capsys, "--agent", f"openai:{url}", "--model", "x", "--as-is"
    )
    failed = {name for name, verdict in verdicts.items() if verdict == "FAIL"}
    assert failed == set(EXPOSED[habit]), reasons
    # Every other scenario PASSes (no-readback now fails every one: none is left).
    assert {verdicts[name] for name in set(verdicts) - failed} <= {"PASS"}, reasons
    for assertion in EXPOSED[habit].values():
        assert re.search(rf"Contradicted: .*{assertion} by ev-\d{{5}}", reasons), reasons


def test_trials_print_pass_k_and_each_report_verifies_naming_the_agent(
    reference_server: Start,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    tmp_path: Path,
) -> None:
    url = reference_server(None)
    call_command(
        "runscenarios",
        *("--agent", f"openai:{url}", "--model", "asked-for", "--scenario", "double_confirmation"),
        *("--trials", "2", "--out", str(tmp_path)),
    )
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("double_confirmation pass^2=yes pass_rate=2/2")
    reports = sorted(tmp_path.glob("double_confirmation.trial*.json"))
    assert len(reports) == 2
    call_command("verifyreport", *map(str, reports))  # exits non-zero unless all verify
    verified = capsys.readouterr().out
    assert verified.count(f"Agent under test: openai {url} (model scripted-reference)") == 2
    assert verified.count("Referee: scenario annotations") == 2
