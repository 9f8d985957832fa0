from __future__ import annotations

import collections
import contextlib
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

READY_WITHIN_S = 60.0  # a loaded two-core machine imports the lab slowly


def start_reference_server(habit: str | None = None) -> tuple[subprocess.Popen[str], str]:
    """The reference OpenAI-compatible server on a free loopback port, once it says so."""
    command = ["-m", "lab.reference_agents.openai_server", "--port", "0"]
    return _start_chat_server([*command, *(["--habit", habit] if habit else [])])


def start_team_server(business: str, habit: str = "correct") -> tuple[subprocess.Popen[str], str]:
    """A team's booking agent (lab/reference_agents/team_agents) on a free loopback port."""
    module = "lab.reference_agents.team_agents.server"
    return _start_chat_server(["-m", module, "--business", business, "--habit", habit])


def _start_chat_server(arguments: list[str]) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, *arguments]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + READY_WITHIN_S
        while not selector.select(timeout=max(deadline - time.monotonic(), 0)):
            if time.monotonic() >= deadline:
                stop(process)
                raise AssertionError("the reference server did not say it was listening")
    line = process.stdout.readline()
    if not line.startswith("listening on http://127.0.0.1:"):
        stop(process)
        raise AssertionError(f"unexpected first line from the reference server: {line!r}")
    return process, line.split()[-1]


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


@pytest.fixture
def reference_server() -> Iterator[Callable[[str | None], str]]:
    """Starts reference servers (by habit) for one test and always stops them."""
    started: list[subprocess.Popen[str]] = []

    def start(habit: str | None = None) -> str:
        process, url = start_reference_server(habit)
        started.append(process)
        return url

    yield start
    for process in started:
        stop(process)


@pytest.fixture
def team_server() -> Iterator[Callable[[str, str], str]]:
    """Starts team agents' servers (by business and habit) for one test; always stopped."""
    started: list[subprocess.Popen[str]] = []

    def start(business: str, habit: str = "correct") -> str:
        process, url = start_team_server(business, habit)
        started.append(process)
        return url

    yield start
    for process in started:
        stop(process)


PIPECAT_PYTHON = ROOT / "benchmarks" / ".pipecat-venv" / "bin" / "python"
PIPECAT_BOT = ROOT / "agents" / "pipecat_bot" / "bot.py"
CLINIC_BOT = ROOT / "agents" / "clinic_bot" / "bot.py"
needs_pipecat = pytest.mark.skipif(
    not PIPECAT_PYTHON.exists(),
    reason="the reference pipecat bot needs benchmarks/.pipecat-venv "
    "(make benchmarks/.pipecat-venv/.installed, or make test-agents)",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start_pipecat_bot(
    llm_url: str, *, audio: bool = False, bot: Path = PIPECAT_BOT, options: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[str], str]:
    """A pipecat bot (the reference one unless told) under pipecat's development runner, once
    uvicorn says it serves (with audio: hearing and speaking on its own STT and TTS).

    Its log is drained by a thread (a full pipe would stall the bot) and kept for failures.
    """
    port = free_port()
    command = [str(PIPECAT_PYTHON), str(bot), "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--llm-url", llm_url, *(["--audio"] if audio else []), *options],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    serving, log = threading.Event(), collections.deque[str](maxlen=200)
    banner = f"Uvicorn running on http://127.0.0.1:{port}"

    def drain() -> None:
        assert process.stdout is not None
        # stop() closes the pipe under this thread once the bot has exited.
        with contextlib.suppress(ValueError, OSError):
            for line in process.stdout:
                log.append(line)
                if banner in line:
                    serving.set()

    threading.Thread(target=drain, daemon=True).start()
    if not serving.wait(READY_WITHIN_S):
        stop(process)
        raise AssertionError("the pipecat bot did not start serving:\n" + "".join(log))
    return process, f"ws://127.0.0.1:{port}/ws"


@pytest.fixture
def pipecat_bot(
    reference_server: Callable[[str | None], str],
) -> Iterator[Callable[..., str]]:
    """Starts the reference server and a pipecat bot on it (start(audio=True): one that hears
    and speaks); both always stopped."""
    started: list[subprocess.Popen[str]] = []

    def start(*, audio: bool = False) -> str:
        process, url = start_pipecat_bot(reference_server(None), audio=audio)
        started.append(process)
        return url

    yield start
    for process in started:
        stop(process)


@pytest.fixture
def clinic_bot(team_server: Callable[[str, str], str]) -> Iterator[Callable[[str], str]]:
    """Starts Harbour Physio's pipecat bot (its own tools and openings) on the team agent's
    server for the clinic with a habit; both always stopped."""
    started: list[subprocess.Popen[str]] = []

    def start(habit: str = "correct") -> str:
        process, url = start_pipecat_bot(team_server("clinic", habit), bot=CLINIC_BOT)
        started.append(process)
        return url

    yield start
    for process in started:
        stop(process)


BIKE_BOT = ROOT / "agents" / "bike_shop" / "bot.py"
# The second pair's own calendar day: the salon dates a weekday from it (a Monday, in another
# week than the lab's fixture week), as a deployed agent dates it from its clock.
SECOND_PAIR_TODAY = "2026-12-07"


@pytest.fixture
def second_pair_server() -> Iterator[Callable[[str, str], str]]:
    """Starts the second pair's desk servers (salon or bikeshop, by habit); always stopped."""
    started: list[subprocess.Popen[str]] = []

    def start(business: str, habit: str = "correct") -> str:
        module = "lab.reference_agents.second_pair.server"
        arguments = ["--business", business, "--habit", habit, "--today", SECOND_PAIR_TODAY]
        process, url = _start_chat_server(["-m", module, *arguments])
        started.append(process)
        return url

    yield start
    for process in started:
        stop(process)


@pytest.fixture
def bike_bot(second_pair_server: Callable[[str, str], str]) -> Iterator[Callable[[str], str]]:
    """Starts Spoke & Chain's pipecat bot (its own tools and slots) on the desk's server for the
    bike shop with a habit; both always stopped."""
    started: list[subprocess.Popen[str]] = []

    def start(habit: str = "correct") -> str:
        process, url = start_pipecat_bot(second_pair_server("bikeshop", habit), bot=BIKE_BOT)
        started.append(process)
        return url

    yield start
    for process in started:
        stop(process)
