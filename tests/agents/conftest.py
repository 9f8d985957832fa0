from __future__ import annotations

import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from tests.conftest import ROOT

READY_WITHIN_S = 60.0  # a loaded two-core machine imports the lab slowly


def start_reference_server(habit: str | None = None) -> tuple[subprocess.Popen[str], str]:
    """The reference OpenAI-compatible server on a free loopback port, once it says so."""
    command = [sys.executable, "-m", "lab.agents.reference.openai_server", "--port", "0"]
    if habit:
        command += ["--habit", habit]
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
