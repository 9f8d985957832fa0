"""A WebSocket whose client is gone takes no more sends, quietly.

Between a client's protocol violation (or its close) and the server telling the application,
daphne's autobahn protocol is already closing and raises `Disconnected` ("Attempt to send on a
closed protocol") on a send; other servers raise an OSError, as the ASGI spec asks. A closed
socket is an expected end, so the send is dropped and every later one with it; the consumer
still hears `websocket.disconnect` and stops as usual.
"""

from __future__ import annotations

from autobahn.exception import Disconnected

from lab.web.security import App, Message, Receive, Scope, Send

_GONE = (Disconnected, OSError)


class ClosedSocketSends:
    """Wraps the WebSocket app: a send after the client is gone is dropped, not raised."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        gone = False

        async def quiet_send(message: Message) -> None:
            nonlocal gone
            if gone:
                return
            try:
                await send(message)
            except _GONE:
                gone = True

        await self.app(scope, receive, quiet_send)
