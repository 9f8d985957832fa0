"""The flood guard's close as a client of a real daphne sees it: the lab's code, not 1011."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from lab.web import limits
from lab.web.consumers import CLOSE_POLICY
from tests.conftest import FAST_CLOCK, ROOT
from tests.web.test_lease_daphne import WAIT_S, Server, start_run, window
from tests.web.wsclient import WebSocketClosed


@pytest.fixture
def server(tmp_path) -> Iterator[Server]:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "LAB_STATE_DIR": str(tmp_path),
        **{name: str(value) for name, value in FAST_CLOCK.items()},
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    served = Server(tmp_path, env, "flood")
    yield served
    served.stop()


async def test_a_flood_of_bad_input_closes_with_the_labs_code_as_daphne_sends_it(server, tmp_path):
    run_id, cookie = start_run(server)
    socket_ = await window(server, run_id, cookie)
    for _ in range(limits.LIMIT):
        await socket_.send_text("{not json")
    try:
        with pytest.raises(WebSocketClosed) as closed:
            async with asyncio.timeout(WAIT_S):
                while True:
                    await socket_.receive()
    finally:
        await socket_.close()
    assert closed.value.code == CLOSE_POLICY
    assert 4000 <= CLOSE_POLICY <= 4999
    server.stop()
    log = (tmp_path / "flood.log").read_text()
    assert "invalid close code" not in log and "Exception inside application" not in log
