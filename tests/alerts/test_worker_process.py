"""The real `manage.py runalerts` process against a real receiver: wake-up, kill -9, SIGTERM."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.alerts.signing import EVENT_ID_HEADER, SIGNATURE_HEADER, verify_signature
from tests.alerts.support import PATIENCE_S, receiver

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec_process_test"


class Worker:
    """A runalerts process whose output lines can be waited for."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "runalerts", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def wait_for_line(self, fragment: str) -> str:
        seen = []
        while True:
            try:
                line = self.lines.get(timeout=PATIENCE_S)
            except queue.Empty:
                raise AssertionError(f"no line with {fragment!r}; saw {seen}") from None
            seen.append(line)
            if fragment in line:
                return line

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait(PATIENCE_S)
        self.reader.join(PATIENCE_S)
        assert self.process.stdout is not None
        self.process.stdout.close()
        return code


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    """A migrated SQLite file, made once; each test works on a copy."""
    path = tmp_path_factory.mktemp("alerts-db") / "db.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{path}"}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    return path


@pytest.fixture
def lab_env(tmp_path, migrated) -> dict[str, str]:
    """The environment of a lab whose database the worker and the seeding process share."""
    shutil.copy(migrated, tmp_path / "db.sqlite3")
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "LAB_STATE_DIR": str(tmp_path),
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": str(ROOT),
        # The test's receiver listens on loopback, which alerts may reach only when named.
        "LAB_ALERT_ALLOWED_HOSTS": "127.0.0.1",
    }


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.stop()


def seed_flag(env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tests.alerts.seeding"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def outbox(env: dict[str, str]) -> list[tuple]:
    path = env["DATABASE_URL"].removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        return db.execute(
            "SELECT m.event_id, m.state, m.attempts, m.claimed_until IS NOT NULL, "
            "(SELECT count(*) FROM alerts_deliveryattempt a WHERE a.message_id = m.id) "
            "FROM alerts_outboxmessage m"
        ).fetchall()


def test_a_flag_reaches_a_running_worker_s_receiver_within_seconds(lab_env, workers, capsys):
    with receiver() as hook:
        env = {**lab_env, "LAB_ALERT_WEBHOOK_URL": hook.url, "LAB_ALERT_WEBHOOK_SECRET": SECRET}
        worker = Worker(env)
        workers.append(worker)
        worker.wait_for_line("polling every 1 s")
        flag = seed_flag(env)
        [request] = hook.wait_for(1)
        worker.wait_for_line("delivered")
        latency = request.at - flag["writing_at"]
        verify_signature(SECRET, request.body, request.headers[SIGNATURE_HEADER], now=request.at)
        assert json.loads(request.body)["audit_row_ref"] == f"audit_{flag['record']}"
        # Polite stop: SIGTERM ends the loop and the process exits cleanly.
        worker.process.send_signal(signal.SIGTERM)
        assert worker.process.wait(PATIENCE_S) == 0
    with capsys.disabled():
        print(f"\nflag written → receiver: {latency * 1000:.0f} ms")
    # One poll interval plus the send; loose, because the machine may be loaded.
    assert 0 <= latency < 15
    [(_, state, attempts, claimed, tries)] = outbox(lab_env)
    assert (state, attempts, claimed, tries) == ("delivered", 1, False, 1)


def test_a_worker_killed_mid_send_is_sent_again_after_restart_exactly_once(lab_env, workers):
    with receiver(stall_first=True) as hook:
        env = {
            **lab_env,
            "LAB_ALERT_WEBHOOK_URL": hook.url,
            "LAB_ALERT_WEBHOOK_SECRET": SECRET,
            # The claim outlives the killed worker by this much; the restarted one waits it out.
            "LAB_ALERT_TIMEOUT_S": "10",
            "LAB_ALERT_LEASE_S": "12",
        }
        first = Worker(env)
        workers.append(first)
        first.wait_for_line("polling")
        seed_flag(env)
        [stalled] = hook.wait_for(1)
        # kill -9 after the claim committed and the request went out, before any answer.
        first.process.send_signal(signal.SIGKILL)
        assert first.process.wait(PATIENCE_S) == -signal.SIGKILL
        [(event_id, state, attempts, claimed, tries)] = outbox(lab_env)
        assert (state, attempts, claimed, tries) == ("pending", 0, True, 0)

        second = Worker(env)
        workers.append(second)
        second.wait_for_line("delivered")
        again = Worker(env, "--once")
        workers.append(again)
        assert again.process.wait(PATIENCE_S) == 0
        requests = hook.requests
    assert len(requests) == 2
    assert {r.headers[EVENT_ID_HEADER] for r in requests} == {stalled.headers[EVENT_ID_HEADER]}
    assert stalled.headers[EVENT_ID_HEADER].replace("-", "") == event_id.replace("-", "")
    # The receiver answered one of them; the lab recorded that one attempt and sends no more.
    [(_, state, attempts, claimed, tries)] = outbox(lab_env)
    assert (state, attempts, claimed, tries) == ("delivered", 1, False, 1)


def test_a_worker_started_with_exit_with_parent_stops_when_its_parent_is_killed(lab_env):
    # The shell `make run` uses: if it dies (even kill -9), the worker must not live on.
    parent = subprocess.Popen(
        ["sh", "-c", f"{sys.executable} manage.py runalerts --exit-with-parent & echo $!; wait"],
        cwd=ROOT,
        env=lab_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert parent.stdout is not None
    worker = int(parent.stdout.readline())
    try:
        assert "polling" in parent.stdout.readline()
        parent.send_signal(signal.SIGKILL)
        parent.wait(PATIENCE_S)
        # The worker holds the pipe's write end: end of file means it has exited.
        reader = threading.Thread(target=parent.stdout.read, daemon=True)
        reader.start()
        reader.join(PATIENCE_S)
        assert not reader.is_alive(), "the worker outlived its parent"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGKILL)
        parent.stdout.close()
