"""The reference server's HTTP surface: models, bad requests answered in JSON, loopback only."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from collections.abc import Callable

import httpx

from tests.conftest import ROOT

Start = Callable[[str | None], str]


async def test_it_lists_its_model_and_answers_bad_requests_with_an_error_body(
    reference_server: Start,
) -> None:
    url = reference_server("invent-slot")
    async with httpx.AsyncClient(base_url=url + "/", timeout=30) as client:
        models = await client.get("models")
        assert models.json()["data"][0]["id"] == "scripted-invent-slot"
        garbage = await client.post("chat/completions", content=b"{not json")
        assert garbage.status_code == 400 and "error" in garbage.json()
        missing = await client.post("chat/completions", json={"model": "m"})
        assert missing.status_code == 400 and "messages" in missing.json()["error"]["message"]
        assert (await client.get("chat/completions")).status_code == 405
        assert (await client.get("nowhere")).status_code == 404
        greeting = await client.post("chat/completions", json={"messages": []})
        message = greeting.json()["choices"][0]["message"]
        assert message["content"].startswith("Hello, you've reached")


def test_it_refuses_to_listen_beyond_loopback() -> None:
    command = [sys.executable, "-m", "lab.reference_agents.openai_server", "--host", "0.0.0.0"]
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert finished.returncode != 0
    assert "loopback addresses only" in finished.stderr
    assert "listening on" not in finished.stdout


def test_stopping_it_with_connections_open_prints_no_traceback() -> None:
    command = [sys.executable, "-m", "lab.reference_agents.openai_server"]
    server = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().rsplit(":", 1)[1].split("/")[0])
        with (
            httpx.Client(base_url=f"http://127.0.0.1:{port}/v1/", timeout=30) as client,
            socket.create_connection(("127.0.0.1", port)),  # a connection that never asks
        ):
            assert client.get("models").status_code == 200  # its connection stays open
            server.send_signal(signal.SIGINT)
            _, errors = server.communicate(timeout=60)
    finally:
        server.kill()
    assert server.returncode == 0
    assert "Traceback" not in errors and "CancelledError" not in errors, errors
