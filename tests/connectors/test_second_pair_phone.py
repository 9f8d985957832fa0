"""Spoke & Chain's desk deployed for phones (agents/bike_shop/phone.py: pipecat 1.14's
TwilioFrameSerializer over FastAPI, its own tools and slot codes, its tools on the lab's HTTP
sandbox), judged over Twilio Media Streams on the interruption template generated from its tools
file. Pipecat's text wire never tells a bot what the caller cut; a phone line does, so here the
desk that books the readback the caller cut into is exposed. Real time: make test-agents only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lab.events.models import StoredEvent
from lab.scenarios.catalog import SCENARIO_DIRS_ENV
from lab.web.sandbox_http import TOKEN_ENV
from tests.conftest import ROOT
from tests.connectors.conftest import free_port, needs_pipecat, stop
from tests.connectors.test_twilio_scenarios import start_phone_bot
from tests.connectors.verdicts import MODES, scenario_verdicts, templates_written

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.pipecat, needs_pipecat]

BIKE_PHONE = ROOT / "agents" / "bike_shop" / "phone.py"
TOOLS = str(ROOT / "agents" / "bike_shop" / "tools.json")
TOKEN = "bike-phone-token"
INTERRUPTION = "hold_service_slot_interruption"


@pytest.fixture(autouse=True)
def _no_leftover_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SCENARIO_DIRS_ENV, "")


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return templates_written(tmp_path_factory.mktemp("bike-phone-scenarios"), TOOLS)


@pytest.fixture
def bike_by_phone(
    second_pair_server: Callable[[str, str], str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str], tuple[str, int]]]:
    """Starts the desk's phone deployment with a habit; answers its media URL and the sandbox
    port its tools call. Always stopped."""
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    started = []

    def start(habit: str) -> tuple[str, int]:
        port = free_port()
        process, url = start_phone_bot(
            second_pair_server("bikeshop", habit), port, bot=BIKE_PHONE, token=TOKEN
        )
        started.append(process)
        return url, port

    yield start
    for process in started:
        stop(process)


@pytest.mark.parametrize(("habit", "mode"), [("correct", "guarded"), ("barge", "as-is")])
def test_the_desk_by_phone_is_judged_on_the_readback_the_caller_cut_into(
    bike_by_phone: Callable[[str], tuple[str, int]],
    templates: Path,
    capsys: pytest.CaptureFixture[str],
    habit: str,
    mode: str,
) -> None:
    url, port = bike_by_phone(habit)
    found, reasons = scenario_verdicts(
        capsys,
        *("--agent", f"twilio:{url}", "--tools", TOOLS, "--scenarios", str(templates)),
        *("--sandbox-port", str(port), "--scenario", INTERRUPTION, *MODES[mode]),
    )
    # What was said and done, for a failure to show.
    told = StoredEvent.objects.filter(type__regex=r"^(agent|caller)\.utterance$|^gate\.|^tool\.")
    reasons += "".join(f"\n{e.type}: {e.payload}" for e in told.order_by("seq"))
    # The caller cut into the readback on the line, and the desk stopped its audio.
    [barge_in] = StoredEvent.objects.filter(type="phone.barge_in")
    assert barge_in.payload["cleared"], barge_in.payload
    if habit == "correct":
        assert found == {INTERRUPTION: "PASS"}, reasons
    else:
        assert found == {INTERRUPTION: "FAIL"}, reasons
        assert "commit_is_latest" in reasons or "interrupted_proposal_expired" in reasons
