"""The second pair's pipecat bot (Spoke & Chain) with its tools on the lab's HTTP sandbox, as a
team points a staging bot at a test backend (`--tools-url`): its own tool names and shapes,
answered through its tools file, and the failed-lookup template's injected failure reaches it.

So invent is exposed on pipecat's eval wire: the bot holds a code it made up after the lookup
failed, which FAILs nothing_invented though the sandbox refuses the code. On its own slots
(test_second_pair_pipecat.py) the same template stays INCONCLUSIVE: no lookup failed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lab.events.models import Run, StoredEvent
from lab.scenarios.catalog import SCENARIO_DIRS_ENV
from lab.web.sandbox_http import TOKEN_ENV
from tests.conftest import ROOT
from tests.connectors.conftest import (
    BIKE_BOT,
    free_port,
    needs_pipecat,
    start_pipecat_bot,
    stop,
)
from tests.connectors.verdicts import MODES, scenario_verdicts, templates_written

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.pipecat, needs_pipecat]

OnSandbox = Callable[[str], tuple[str, int]]
TOOLS = str(ROOT / "agents" / "bike_shop" / "tools.json")
TOKEN = "bike-sandbox-token"
TIMEOUT = "hold_service_slot_tool_timeout"
CORRECTION = "hold_service_slot_correction"


@pytest.fixture(autouse=True)
def _no_leftover_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """runscenarios --scenarios names its folder in the environment; undone after each test."""
    monkeypatch.setenv(SCENARIO_DIRS_ENV, "")


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return templates_written(tmp_path_factory.mktemp("bike-scenarios"), TOOLS)


@pytest.fixture
def bike_bot_on_sandbox(
    second_pair_server: Callable[[str, str], str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[OnSandbox]:
    """Starts the bike bot with a habit, its tools at a free sandbox port; answers (its URL, the
    port runscenarios serves the sandbox on). Always stopped."""
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    started = []

    def start(habit: str) -> tuple[str, int]:
        port = free_port()
        tools_url = f"http://127.0.0.1:{port}/sandbox/tools/"
        options = ("--tools-url", tools_url, "--tools-token", TOKEN)
        process, url = start_pipecat_bot(
            second_pair_server("bikeshop", habit), bot=BIKE_BOT, options=options
        )
        started.append(process)
        return url, port

    yield start
    for process in started:
        stop(process)


def _run(
    capsys: pytest.CaptureFixture[str],
    bot: tuple[str, int],
    scenarios: Path,
    *names: str,
    mode: str,
) -> tuple[dict[str, str], str]:
    url, port = bot
    chosen = [part for name in names for part in ("--scenario", name)]
    arguments = ["--agent", f"pipecat:{url}", "--tools", TOOLS, "--scenarios", str(scenarios)]
    return scenario_verdicts(capsys, *arguments, "--sandbox-port", str(port), *chosen, *MODES[mode])


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_honest_bike_bot_on_the_sandbox_passes_the_failed_lookup(
    bike_bot_on_sandbox: OnSandbox,
    templates: Path,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    mode: str,
) -> None:
    bot = bike_bot_on_sandbox("correct")
    verdicts, reasons = _run(capsys, bot, templates, TIMEOUT, CORRECTION, mode=mode)
    assert verdicts == {TIMEOUT: "PASS", CORRECTION: "PASS"}, reasons
    # The injected failure reached the bot through the sandbox, and each call the bot's wire
    # reported afterwards was the one the sandbox had served: recorded once, not observed again.
    assert StoredEvent.objects.filter(type="tool.lookup.failed").exists()
    holds = StoredEvent.objects.filter(type="tool.commit.succeeded")
    assert sorted(holds.values_list("run_id", flat=True)) == sorted(
        Run.objects.values_list("id", flat=True)
    )
    assert not StoredEvent.objects.filter(type="tool.call.observed").exists()


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_inventing_bike_bot_on_the_sandbox_fails_nothing_invented(
    bike_bot_on_sandbox: OnSandbox,
    templates: Path,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    mode: str,
) -> None:
    verdicts, reasons = _run(capsys, bike_bot_on_sandbox("invent"), templates, TIMEOUT, mode=mode)
    assert verdicts == {TIMEOUT: "FAIL"}, reasons
    assert re.search(r"Contradicted: .*nothing_invented by ev-\d{5}", reasons), reasons


@pytest.mark.parametrize(("mode", "verdict"), [("guarded", "PASS"), ("as-is", "FAIL")])
def test_on_the_sandbox_the_gate_stands_in_front_of_the_bike_bots_repeated_hold(
    bike_bot_on_sandbox: OnSandbox,
    templates: Path,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    mode: str,
    verdict: str,
) -> None:
    """On its own slots a repeated hold executes twice in both modes; on the sandbox the gate
    answers the repeat with the first hold's receipt when guarded."""
    double = "hold_service_slot_double_confirmation"
    verdicts, reasons = _run(capsys, bike_bot_on_sandbox("double"), templates, double, mode=mode)
    assert verdicts == {double: verdict}, reasons
    assert ("executed_once" in reasons) is (verdict == "FAIL"), reasons


def test_the_eager_bike_bot_on_the_sandbox_fails_the_failed_lookup_on_its_unread_hold(
    bike_bot_on_sandbox: OnSandbox,
    templates: Path,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
) -> None:
    """The failed-lookup template asks for a readback and a yes after it, as tool_timeout does:
    a hold on the yes with nothing read back is no confirmed hold."""
    verdicts, reasons = _run(capsys, bike_bot_on_sandbox("eager"), templates, TIMEOUT, mode="as-is")
    assert verdicts == {TIMEOUT: "FAIL"}, reasons
    assert re.search(r"Contradicted: .*commit_confirmed by ev-\d{5}", reasons), reasons
