from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# Scripted runs in tests: a tenth of real time, and a tool timeout that scales to 500 ms.
FAST_CLOCK = {"LAB_TIME_SCALE": 0.1, "LAB_TOOL_TIMEOUT_MS": 5000}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory) -> Iterator[str]:
    """The real lab served by daphne on a free port, with its own SQLite file."""
    state = tmp_path_factory.mktemp("lab-server")
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{state / 'db.sqlite3'}",
        "LAB_STATE_DIR": str(state),
        **{name: str(value) for name, value in FAST_CLOCK.items()},
    }
    python = sys.executable
    subprocess.run(
        [python, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    port = _free_port()
    log = (state / "daphne.log").open("w")
    server = subprocess.Popen(
        [python, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "lab.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    # Generous: at a load of 20 on two cores daphne took over 30 s to start listening.
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                log.close()
                raise RuntimeError((state / "daphne.log").read_text()) from None
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    server.terminate()
    server.wait(timeout=10)
    log.close()


@pytest.fixture
def browser_page(lab_server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(60000)
        yield page
        browser.close()


@pytest.fixture
def fast_clock(settings):
    """Compress the conversation clock so scripted runs take a fraction of real time.

    The tool timeout scales with it, so it is raised to keep a real lookup well inside it
    (500 ms) on a loaded two-core machine; injected timeouts still exceed it by design.
    """
    for name, value in FAST_CLOCK.items():
        setattr(settings, name, value)
    return settings


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker) -> Iterator[None]:
    """The test database, and before it is dropped, an end to sessions other threads left open.

    Socket tests run ORM calls in worker threads whose connections outlive the test; SQLite
    does not mind, but PostgreSQL refuses to drop a database that a session still uses.
    """
    yield
    with django_db_blocker.unblock():
        from django.db import connection, connections

        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
        for each in connections.all():
            each.close()
            if hasattr(each, "close_pool"):
                each.close_pool()


@pytest.fixture(scope="session", autouse=True)
def _flush_lifts_write_once() -> Iterator[None]:
    """Between transactional tests pytest-django empties every table; the write-once triggers
    refuse that (as they must anywhere else), so the flush alone lifts them, in its transaction."""
    from django.db.backends.base.operations import BaseDatabaseOperations

    from tests.audit.lifting import lifted

    flush = BaseDatabaseOperations.execute_sql_flush

    def lifting_flush(self: BaseDatabaseOperations, sql_list: list[str]) -> None:
        with lifted(self.connection):
            flush(self, sql_list)

    BaseDatabaseOperations.execute_sql_flush = lifting_flush  # type: ignore[method-assign]
    yield
    BaseDatabaseOperations.execute_sql_flush = flush  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> Iterator[None]:
    """Each test gets its own channel layer: the Redis layer's locks and pools belong to the
    event loop that first used them, and every async test runs on a new loop."""
    from channels.layers import channel_layers

    yield
    channel_layers.backends.clear()


@pytest.fixture(autouse=True)
def _fresh_throttle() -> Iterator[None]:
    """Each test starts with no failed sign-ins or tokens counted (every test client shares
    one address, 127.0.0.1, and the in-process cache outlives a test)."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _recordings_in_tmp(settings, tmp_path) -> None:
    """Voice runs' recordings go to the test's own folder, never the developer's state dir."""
    settings.LAB_RECORDING_DIR = tmp_path / "recordings"
