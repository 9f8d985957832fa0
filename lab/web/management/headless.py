"""Headless runs: the scripted caller through the browser's WebSocket path, or a free call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.core.management.base import CommandError
from pydantic import ValidationError

from lab.asgi import application
from lab.events.models import Run
from lab.runs.ownership import headless_owner_token
from lab.runs.session import RunSession
from lab.scenarios.catalog import free_contract
from lab.scenarios.contracts import CallerLine
from lab.web.access import owner_session_new, session_cookie
from lab.web.live import REGISTRY
from lab.web.management.sandbox_serving import sandbox_served

RUN_TIMEOUT_S = 600
# The agent's close is bounded by the session (AGENT_CLOSE_S); this only bounds the wait on it.
WORK_DONE_S = 15.0


async def play_headless(
    run: Run, *, owner_token: str | None = None, host: str = "127.0.0.1"
) -> None:
    """Connect like the owner's browser, press "play", and wait for the final verdict fragment.

    The run's owner defaults to this process's headless owner (lab.runs.services.run_start).
    host is the one the socket says it reached (a server passes its request's, which
    ALLOWED_HOSTS already admitted; loopback may not be among them)."""
    session = await database_sync_to_async(owner_session_new)(owner_token or headless_owner_token())
    communicator = WebsocketCommunicator(
        application,
        f"/ws/runs/{run.id}/",
        headers=[
            (b"host", host.encode()),
            (b"origin", f"http://{host}".encode()),
            session_cookie(session),
        ],
    )
    # Generous: many headless runs connecting at once queue behind each other's set-up.
    connected, _ = await communicator.connect(timeout=60)
    if not connected:
        raise CommandError(f"the run {run.id} refused the connection")
    try:
        await communicator.send_to(text_data=json.dumps({"action": "play"}))
        async with asyncio.timeout(RUN_TIMEOUT_S):
            while True:
                message = await communicator.receive_output(timeout=RUN_TIMEOUT_S)
                if message["type"] == "websocket.close":
                    break
                if 'data-final="true"' in message.get("text", ""):
                    break
        await _work_done(str(run.id))
    finally:
        await communicator.disconnect()
        await database_sync_to_async(session.delete)()


async def _work_done(run_id: str) -> None:
    """Let the run's own work finish (closing the agent's connection follows the verdict), so
    leaving does not cancel it midway and leave a socket open when this loop closes."""
    live = REGISTRY.runs.get(run_id)
    if live is not None and (tasks := list(live.tasks)):
        await asyncio.wait(tasks, timeout=WORK_DONE_S)


async def play_free(run: Run, lines: list[str]) -> None:
    """A free call: each line said once the agent has answered the last and stopped speaking.

    It drives the run's session directly (the socket would only forward the lines), so
    "answered" is the session's own idle state rather than a guess from page fragments.
    """
    session = RunSession(run=run, contract=free_contract())
    async with asyncio.timeout(RUN_TIMEOUT_S):
        await session.start()
        for line in lines:
            await session.wait_idle()
            await session.caller_says(line, source="script")
        await session.wait_idle()
        await session.end(reason_kind="completed", reason="the caller said every line")


def free_lines(path: Path) -> list[str]:
    """The caller lines of a free call: one per line; blank lines and # comments are skipped."""
    try:
        raw = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"--free {path}: {error}") from None
    lines = [line.strip() for line in raw if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise CommandError(f"--free {path}: no caller lines in it")
    for number, line in enumerate(lines, 1):
        try:
            CallerLine(say=line)
        except ValidationError:
            raise CommandError(
                f"--free {path}: line {number} is longer than 300 characters"
            ) from None
    return lines


async def play_served(sandbox_port: int | None, run: Run, lines: list[str] | None) -> None:
    """Play the run (its free lines, else its scenario) with the sandbox served on the port."""
    async with sandbox_served(sandbox_port):
        await (play_free(run, lines) if lines else play_headless(run))
