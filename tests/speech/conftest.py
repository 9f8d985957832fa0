"""Fixtures for the speech tests that need a real Redis (skipped where redis-server is absent)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.conftest import _free_port


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    server = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--dir",
            tmp_path,
        ],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    deadline = time.monotonic() + 30
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    client.close()
    server.kill()
    server.wait()
