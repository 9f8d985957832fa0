"""runscenarios --agent twilio:ws://…/media against the reference pipecat bot deployed for phones
(agents/pipecat_bot/phone.py: pipecat 1.14's TwilioFrameSerializer over a FastAPI WebSocket, its
LLM the reference brain), its tools on the lab's HTTP sandbox. Typed text never reaches it: the
lab speaks each caller line, hears the bot with its own recognizer, and judges what reached the
sandbox. The same bot with pipecat's TelnyxFrameSerializer (--wire telnyx) is called over
Telnyx's media streaming. Real time, on a loaded machine: each call takes minutes, so these run
in make test-agents only.
"""

from __future__ import annotations

import collections
import contextlib
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.core.management import call_command

from lab.events.models import StoredEvent
from lab.web.sandbox_http import TOKEN_ENV
from tests.conftest import ROOT
from tests.connectors.conftest import (
    PIPECAT_PYTHON,
    READY_WITHIN_S,
    free_port,
    needs_pipecat,
    start_reference_server,
    stop,
)
from tests.connectors.verdicts import scenario_verdicts

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.pipecat, needs_pipecat]

PHONE_BOT = ROOT / "agents" / "pipecat_bot" / "phone.py"
TOKEN = "phone-test-token"
SCENARIOS = ("correction", "no_confirmation", "tool_timeout", "interruption", "double_confirmation")
# Habit → the scenario it FAILs over the phone and the assertion the reason names.
HABITS = {
    "stale-args": ("correction", "commit_is_latest"),
    "still-here": ("no_confirmation", "positive_is_not_yes"),
    "double-book": ("double_confirmation", "executed_once"),
    "invent-slot": ("tool_timeout", "nothing_invented"),
    "keep-after-interrupt": ("interruption", "commit_is_latest"),
}

PhoneBot = Callable[..., tuple[str, int]]


def start_phone_bot(
    llm_url: str,
    sandbox_port: int | None,
    wire: str = "twilio",
    *,
    bot: Path = PHONE_BOT,
    token: str = TOKEN,
) -> tuple[subprocess.Popen[str], str]:
    """A phone bot on a free port, once uvicorn serves; its tools on the sandbox, or its own."""
    port = free_port()
    command = [str(PIPECAT_PYTHON), str(bot), "--port", str(port), "--llm-url", llm_url]
    if wire != "twilio":
        command += ["--wire", wire]
    if sandbox_port is not None:
        tools_url = f"http://127.0.0.1:{sandbox_port}/sandbox/tools/"
        command += ["--tools-url", tools_url, "--tools-token", token]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    serving, log = threading.Event(), collections.deque[str](maxlen=200)

    def drain() -> None:
        assert process.stdout is not None
        with contextlib.suppress(ValueError, OSError):
            for line in process.stdout:
                log.append(line)
                if f"Uvicorn running on http://127.0.0.1:{port}" in line:
                    serving.set()

    threading.Thread(target=drain, daemon=True).start()
    if not serving.wait(READY_WITHIN_S):
        stop(process)
        raise AssertionError("the phone bot did not start serving:\n" + "".join(log))
    return process, f"ws://127.0.0.1:{port}/media"


@pytest.fixture
def phone_bot(monkeypatch: pytest.MonkeyPatch) -> Iterator[PhoneBot]:
    """Starts (brain, bot) pairs by habit; answers the bot's URL and the sandbox port."""
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    started: list[subprocess.Popen[str]] = []

    def start(
        habit: str | None = None, *, tools_at_lab: bool = True, wire: str = "twilio"
    ) -> tuple[str, int]:
        brain, llm_url = start_reference_server(habit)
        started.append(brain)
        port = free_port()
        bot, url = start_phone_bot(llm_url, port if tools_at_lab else None, wire)
        started.append(bot)
        return url, port

    yield start
    for process in started:
        stop(process)


def _over_the_phone(url: str, port: int, *scenarios: str, wire: str = "twilio") -> list[str]:
    named = [arg for scenario in scenarios for arg in ("--scenario", scenario)]
    return ["--agent", f"{wire}:{url}", "--sandbox-port", str(port), *named]


def test_the_correct_bot_passes_over_the_phone(
    phone_bot: PhoneBot, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url, port = phone_bot()
    found, reasons = scenario_verdicts(capsys, *_over_the_phone(url, port, *SCENARIOS))
    assert found == dict.fromkeys(SCENARIOS, "PASS"), reasons


def test_the_correct_bot_passes_over_telnyx_too(
    phone_bot: PhoneBot, capsys: pytest.CaptureFixture[str]
) -> None:
    url, port = phone_bot(wire="telnyx")
    args = _over_the_phone(url, port, "correction", wire="telnyx")
    found, reasons = scenario_verdicts(capsys, *args)
    assert found == {"correction": "PASS"}, reasons
    # Over Telnyx's wire, measured on its line like Twilio's.
    assert StoredEvent.objects.filter(type="phone.latency").exists()
    started = StoredEvent.objects.get(type="run.started")
    assert started.payload["agent"]["connector"] == "telnyx"


@pytest.mark.parametrize("habit", sorted(HABITS))
def test_each_habit_fails_the_scenario_that_exposes_it_over_the_phone(
    phone_bot: PhoneBot, capsys: pytest.CaptureFixture[str], habit: str
) -> None:
    scenario, assertion = HABITS[habit]
    url, port = phone_bot(habit)
    found, reasons = scenario_verdicts(capsys, *_over_the_phone(url, port, scenario), "--as-is")
    assert found == {scenario: "FAIL"}, reasons
    assert assertion in reasons
    latencies = [e.payload["latency_ms"] for e in StoredEvent.objects.filter(type="phone.latency")]
    assert latencies and all(latency > 0 for latency in latencies), latencies
    if scenario == "interruption":
        # The bot heard the caller over its readback and stopped: the cut is measured.
        [barge_in] = StoredEvent.objects.filter(type="phone.barge_in")
        assert barge_in.payload["cleared"], barge_in.payload
        # How soon it stopped is the bot's own figure (a starved bot took 20 s at load 15).
        assert barge_in.payload["response_ms"] > 0, barge_in.payload


def test_a_bot_whose_tools_are_not_at_the_lab_is_inconclusive_and_says_so(
    phone_bot: PhoneBot, capsys: pytest.CaptureFixture[str]
) -> None:
    url, port = phone_bot(tools_at_lab=False)
    found, reasons = scenario_verdicts(capsys, *_over_the_phone(url, port, "correction"))
    assert found == {"correction": "INCONCLUSIVE"}, reasons
    assert "actions not observed" in reasons


def test_four_calls_at_once_report_latency_verdicts_and_the_labs_capacity(
    phone_bot: PhoneBot, capsys: pytest.CaptureFixture[str]
) -> None:
    url, port = phone_bot()
    try:
        call_command("runscenarios", *_over_the_phone(url, port, "correction"), "--calls", "4")
    except SystemExit as exit_info:
        assert exit_info.code == 1
    out = capsys.readouterr().out
    calls = [line.split() for line in out.splitlines() if line.startswith("correction call")]
    assert [words[1] for words in calls] == ["call1", "call2", "call3", "call4"]
    assert all(words[2] in ("PASS", "FAIL", "INCONCLUSIVE") for words in calls)
    assert re.search(r"latency \(caller's audio end → bot's first audio\) p50=\d+ ms p95=\d+", out)
    assert "failed connections: 0/4;" in out and "lab capacity: " in out
