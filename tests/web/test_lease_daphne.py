"""Two real daphne processes on loopback share one SQLite file: one drives a run, the other's
window of the same owner watches, and takes over when the first process dies."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path

import pytest

from lab.events.chain import GENESIS_HASH, digest, event_body
from lab.events.types import EVENT_LIST
from tests.conftest import FAST_CLOCK, ROOT, _free_port
from tests.web.wsclient import WebSocket

# Bounds for a loaded two-core machine; a lapsed lease takes up to LEASE_TTL_S (10 s) plus
# one takeover poll to be noticed.
START_S = 60
WAIT_S = 90


class Server:
    def __init__(self, state: Path, env: dict[str, str], name: str) -> None:
        self.port = _free_port()
        self.log = (state / f"{name}.log").open("w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "daphne",
                "-b",
                "127.0.0.1",
                "-p",
                str(self.port),
                "lab.asgi:application",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + START_S
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError((state / f"{name}.log").read_text()) from None
                time.sleep(0.1)

    def request(self, method: str, path: str, *, body: str = "", headers: dict[str, str]):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT_S)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response, response.read()
        finally:
            connection.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture
def two_servers(tmp_path) -> Iterator[tuple[Server, Server]]:
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "LAB_STATE_DIR": str(tmp_path),
        "LAB_RECONNECT_GRACE_S": "60",
        **{name: str(value) for name, value in FAST_CLOCK.items()},
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    servers: list[Server] = []
    try:
        servers.append(Server(tmp_path, env, "one"))
        servers.append(Server(tmp_path, env, "two"))
        yield servers[0], servers[1]
    finally:
        for server in servers:
            server.stop()


def start_run(server: Server) -> tuple[str, str]:
    """Start a run as a browser would; returns its id and the session cookie that owns it."""
    response, body = server.request("GET", "/", headers={})
    csrf = SimpleCookie(response.getheader("Set-Cookie"))["csrftoken"].value
    form = f"scenario=correction&channel=typed&csrfmiddlewaretoken={csrf}"
    response, _ = server.request(
        "POST",
        "/runs/",
        body=form,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={csrf}",
        },
    )
    assert response.status == 302, body
    session = SimpleCookie(response.getheader("Set-Cookie"))["sessionid"].value
    return response.getheader("Location").split("/")[2], f"sessionid={session}"


async def window(server: Server, run_id: str, cookie: str) -> WebSocket:
    origin = f"http://127.0.0.1:{server.port}"
    return await WebSocket.connect(
        server.port, f"/ws/runs/{run_id}/", headers={"Origin": origin, "Cookie": cookie}
    )


async def until(socket_: WebSocket, needle: str) -> str:
    async with asyncio.timeout(WAIT_S):
        while True:
            message = await socket_.receive_text()
            if needle in message:
                return message


async def say(socket_: WebSocket, text: str) -> None:
    await socket_.send_text(json.dumps({"action": "say", "text": text}))


def stored_events(server: Server, run_id: str, cookie: str):
    response, body = server.request(
        "GET", f"/runs/{run_id}/events.json", headers={"Cookie": cookie}
    )
    assert response.status == 200
    return EVENT_LIST.validate_python(json.loads(body)["events"])


async def test_one_driver_across_two_daphne_processes(two_servers):
    one, two = two_servers
    run_id, cookie = start_run(one)
    first = await window(one, run_id, cookie)
    assert 'data-role="driver"' in await first.receive_text()
    second = await window(two, run_id, cookie)
    assert "Watching: another window drives this run" in await second.receive_text()

    await until(first, 'data-speaking="false"')
    await say(first, "I'd like an appointment on Tuesday morning.")
    await until(first, "Shall I book it?")
    await until(first, 'data-speaking="false"')
    await say(first, "Actually, make that Friday afternoon.")
    await until(first, "Friday at 2:30 PM")
    await say(second, "Yes, book it.")
    assert "this window is watching" in await until(second, "Not accepted")

    # The driving process dies; once its lease lapses, the waiting window drives.
    one.stop()
    await first.close()
    assert 'data-role="driver"' in await until(second, 'data-role="driver"')
    await say(second, "Yes, book it.")
    await until(second, "Your reference is")
    await second.send_text(json.dumps({"action": "end"}))
    await until(second, 'data-final="true"')
    await second.close()

    events = stored_events(two, run_id, cookie)
    previous = GENESIS_HASH
    for seq, event in enumerate(events, start=1):
        assert (event.seq, event.prev_hash, event.hash) == (
            seq,
            previous,
            digest(event_body(event)),
        )
        previous = event.hash
    said = [e.payload.text for e in events if e.type == "caller.utterance"]
    assert said == [
        "I'd like an appointment on Tuesday morning.",
        "Actually, make that Friday afternoon.",
        "Yes, book it.",
    ]
    assert sum(e.type == "tool.commit.succeeded" for e in events) == 1
