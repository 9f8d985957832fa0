"""The trattoria's own agent on the voice channel: the lab hears the scripted caller with its VAD
and ASR, speaks the agent's replies with its TTS, and cuts a readback when the caller barges in;
the honest agent PASSes, and the one that books the readback the caller cut into FAILs.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conftest import ROOT
from tests.connectors.verdicts import scenario_verdicts

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.models]

Start = Callable[[str, str], str]
TOOLS = str(ROOT / "agents" / "trattoria" / "tools.json")


def _verdicts(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, str], str]:
    return scenario_verdicts(capsys, "--channel", "voice", "--tools", TOOLS, *args)


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
