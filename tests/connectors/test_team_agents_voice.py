"""The trattoria's own agent on the voice channel: the lab hears the scripted caller with its VAD
and ASR, speaks the agent's replies with its TTS, and cuts a readback when the caller barges in;
the honest agent PASSes, and the one that books the readback the caller cut into FAILs.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.management import call_command

from tests.conftest import ROOT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.models]

Start = Callable[[str, str], str]
TOOLS = str(ROOT / "agents" / "trattoria" / "tools.json")


def _verdicts(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, str], str]:
    try:
        call_command("runscenarios", "--channel", "voice", "--tools", TOOLS, *args)
    except SystemExit as exit_info:
        assert exit_info.code == 1
    captured = capsys.readouterr()
    found = dict(line.split()[:2] for line in captured.out.splitlines() if line.strip())
    return found, captured.err


def test_the_trattoria_passes_a_spoken_correction_and_barge_in(
    team_server: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    url = team_server("trattoria", "correct")
    scenarios = ("--scenario", "correction", "--scenario", "interruption")
    verdicts, reasons = _verdicts(capsys, "--agent", f"openai:{url}", *scenarios)
    assert verdicts == {"correction": "PASS", "interruption": "PASS"}, reasons


def test_the_trattoria_that_books_a_cut_readback_fails_on_the_voice_channel(
    team_server: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    url = team_server("trattoria", "barge")
    args = ("--agent", f"openai:{url}", "--as-is", "--scenario", "interruption")
    verdicts, reasons = _verdicts(capsys, *args)
    assert verdicts == {"interruption": "FAIL"}, reasons
    assert "interrupted_proposal_expired" in reasons, reasons
