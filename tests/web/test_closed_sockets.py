"""A socket whose client is gone: the lab's sends to it are dropped, never an exception.

Under daphne a client that breaks the protocol (an unmasked frame, a reserved opcode, a bad
close code) leaves autobahn closing before the application hears of it, and a send in that
window raised "Attempt to send on a closed protocol" out of the consumer.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from autobahn.exception import Disconnected

from lab.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)


class ClosingServer:
    """The server's side of one socket: accepts, then every send finds the protocol closing."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.sent: list[dict[str, Any]] = []
        self.refused = 0
        self.gone = asyncio.Event()
        self._inbox: list[dict[str, Any]] = [{"type": "websocket.connect"}]

    async def receive(self) -> dict[str, Any]:
        if self._inbox:
            return self._inbox.pop(0)
        await self.gone.wait()
        return {"type": "websocket.disconnect", "code": 1002}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "websocket.accept":
            self.sent.append(message)
            return
        self.refused += 1
        self.gone.set()  # the client is gone: the server tells the application next
        raise self.error


@pytest.mark.parametrize(
    "error",
    [Disconnected("Attempt to send on a closed protocol"), ConnectionResetError()],
    ids=["daphne", "oserror"],
)
async def test_a_send_after_the_client_broke_the_protocol_is_dropped_quietly(error) -> None:
    server = ClosingServer(error)
    scope = {
        "type": "websocket",
        "path": f"/ws/runs/{uuid.uuid4()}/",
        "raw_path": b"",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "subprotocols": [],
        "scheme": "ws",
    }
    async with asyncio.timeout(10):
        await application(scope, server.receive, server.send)
    # The consumer tried to tell the page there is no such run; that send, and any after it,
    # found the client gone and went nowhere.
    assert [m["type"] for m in server.sent] == ["websocket.accept"]
    assert server.refused == 1
