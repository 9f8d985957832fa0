"""runscenarios --agent pipecat:ws://…/ws against the reference pipecat bot (a real pipecat 1.14
pipeline under its development runner, its LLM the reference server): typed runs, the tool
calls observed from the bot's function-call reports and answered again by the lab's sandbox.

Two scenarios cannot give the in-process verdict through the eval wire, and never PASS:
facts_before_booking needs the lab's retrieval window, which the wire cannot hand a bot (its
answers cite nothing the lab retrieved), and tool_timeout injects its timeout into the lab's
sandbox, which the bot's own tools never meet: the bot's lookups are recorded as what its own
tools answered, so no lookup failed and the scenario has no evidence (INCONCLUSIVE, saying so).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import call_command

from lab.scenarios.catalog import all_contracts
from tests.connectors.conftest import needs_pipecat
from tests.connectors.verdicts import scenario_verdicts

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.pipecat, needs_pipecat]

# Mode → scenario → its verdict through the wire and what the reasons say. The bot answers the
# facts question without the lab's retrieval window, so its answer cites nothing: the fail-closed
# grader (v2) no longer calls its claims unsupported, and answers_cite is what fails.
NOT_THROUGH_THE_WIRE = {
    "guarded": {
        "facts_before_booking": ("FAIL", r"Contradicted: .*answers_cite by ev-\d{5}"),
        "tool_timeout": ("INCONCLUSIVE", r"No evidence for failure_recorded: .*no lookup failed"),
    },
    "as-is": {
        "facts_before_booking": ("FAIL", r"Contradicted: .*answers_cite by ev-\d{5}"),
        "tool_timeout": ("INCONCLUSIVE", r"No evidence for failure_recorded: .*no lookup failed"),
    },
}


def test_the_reference_pipecat_bot_gets_the_in_process_verdicts_the_wire_can_carry(
    pipecat_bot: Callable[[], str],
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    tmp_path: Path,
) -> None:
    in_process, _ = scenario_verdicts(capsys)
    url = pipecat_bot()
    through, reasons = scenario_verdicts(
        capsys, "--agent", f"pipecat:{url}", "--out", str(tmp_path)
    )
    assert set(through) == set(all_contracts())
    apart = NOT_THROUGH_THE_WIRE["guarded"]
    same = set(through) - set(apart)
    assert {name: through[name] for name in same} == {name: in_process[name] for name in same}
    assert set(in_process.values()) == {"PASS"}
    _assert_apart(through, reasons, apart)
    call_command("verifyreport", str(tmp_path / "correction.json"))
    verified = capsys.readouterr().out
    assert f"Agent under test: pipecat {url} (its own tools, observed only: the gate" in verified
    assert "consistent, signed by this lab, verdict PASS" in verified


def test_the_reference_pipecat_bot_passes_as_is_what_the_wire_can_carry(
    pipecat_bot: Callable[[], str], capsys: pytest.CaptureFixture[str], fast_clock: object
) -> None:
    """As-is the bot is judged on its own (the lab's scripted agent has unguarded habits)."""
    through, reasons = scenario_verdicts(capsys, "--agent", f"pipecat:{pipecat_bot()}", "--as-is")
    apart = NOT_THROUGH_THE_WIRE["as-is"]
    assert {through[name] for name in set(all_contracts()) - set(apart)} == {"PASS"}, reasons
    _assert_apart(through, reasons, apart)


def _assert_apart(through: dict[str, str], reasons: str, apart: dict[str, tuple[str, str]]) -> None:
    for name, (verdict, said) in apart.items():
        assert through[name] == verdict, reasons
        assert re.search(said, reasons), reasons


@pytest.mark.models
def test_on_voice_runs_in_text_mode_the_lab_hears_the_caller_and_voices_the_bot(
    pipecat_bot: Callable[[], str],
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bot that neither hears nor speaks (LAB_PIPECAT_MODE=text; audio mode is
    test_pipecat_audio.py): the lab's VAD and ASR hear the scripted caller's audio and its TTS
    speaks the bot's replies, so barge-in works."""
    monkeypatch.setenv("LAB_PIPECAT_MODE", "text")
    scenarios = ("--scenario", "correction", "--scenario", "interruption")
    through, reasons = scenario_verdicts(
        capsys, "--agent", f"pipecat:{pipecat_bot()}", "--channel", "voice", *scenarios
    )
    assert through == {"correction": "PASS", "interruption": "PASS"}, reasons
