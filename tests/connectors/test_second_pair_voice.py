"""The salon's desk on the voice channel, on its generated templates: the lab hears the scripted
caller (and its persona answer) with its VAD and ASR, voices the desk with its TTS and cuts the
readback the caller barges into; the honest desk PASSes, the one that books the cut readback FAILs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lab.scenarios.catalog import SCENARIO_DIRS_ENV
from tests.conftest import ROOT
from tests.connectors.verdicts import scenario_verdicts, templates_written

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.models]

Start = Callable[[str, str], str]
TOOLS = str(ROOT / "agents" / "salon" / "tools.json")


@pytest.fixture
def templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(SCENARIO_DIRS_ENV, "")
    return templates_written(tmp_path, TOOLS)


def _verdicts(
    capsys: pytest.CaptureFixture[str], url: str, templates: Path, *args: str
) -> tuple[dict[str, str], str]:
    agent = ("--agent", f"openai:{url}", "--tools", TOOLS, "--scenarios", str(templates))
    return scenario_verdicts(capsys, "--channel", "voice", *agent, *args)


def test_the_salon_passes_a_spoken_correction_and_barge_in(
    second_pair_server: Start, templates: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios = (
        "--scenario",
        "confirm_booking_correction",
        "--scenario",
        "confirm_booking_interruption",
    )
    verdicts, reasons = _verdicts(
        capsys, second_pair_server("salon", "correct"), templates, *scenarios
    )
    assert verdicts == dict.fromkeys(scenarios[1::2], "PASS"), reasons


def test_the_salon_that_books_a_cut_readback_fails_on_the_voice_channel(
    second_pair_server: Start, templates: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = second_pair_server("salon", "barge")
    args = ("--as-is", "--scenario", "confirm_booking_interruption")
    verdicts, reasons = _verdicts(capsys, url, templates, *args)
    assert verdicts == {"confirm_booking_interruption": "FAIL"}, reasons
    assert "interrupted_proposal_expired" in reasons, reasons
