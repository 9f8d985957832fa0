"""Answers for requests daphne's HTTP parser (twisted) refuses before the lab ever sees them.

Twisted drops the connection without a word when the request line or one header line outgrows
its line limit, and answers a bare 400 to too many or too large headers. Here those get 414
(request line) or 431 (headers), and every refusal carries the lab's security headers.
"""

from __future__ import annotations

from typing import Any

from daphne.http_protocol import HTTPFactory
from twisted.web.http import HTTPChannel, _GenericHTTPChannelProtocol

from lab.web.security import SECURITY_HEADERS

# How long a refused connection may go on sending before it is closed.
LINGER_S = 5
REASONS = {400: b"Bad Request", 414: b"URI Too Long", 431: b"Request Header Fields Too Large"}


def refusal(status: int, explanation: str) -> bytes:
    """A complete HTTP/1.1 response that closes the connection."""
    body = f"{explanation}\n".encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *SECURITY_HEADERS,
    ]
    head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
    return b"HTTP/1.1 %d %s\r\n%s\r\n%s" % (status, REASONS[status], head, body)


class LimitedHTTPChannel(HTTPChannel):
    """Twisted's channel, answering every request it refuses instead of hanging up on some."""

    def _awaiting_request_line(self) -> bool:
        return bool(self._HTTPChannel__first_line)  # type: ignore[attr-defined]

    def _refuse(self, status: int, explanation: str) -> None:
        # The answer is final: whatever else the client sends is read and dropped.
        self.dataReceived = self.lineReceived = lambda *args: None  # type: ignore[method-assign]
        transport: Any = self.transport  # a TCP transport: it half-closes
        transport.write(refusal(status, explanation))
        # Half-close, then let the client finish: closing with its bytes unread would reset the
        # connection, which can destroy the answer before the client reads it.
        transport.loseWriteConnection()
        self.setTimeout(LINGER_S)

    def _too_long(self) -> None:
        if self._awaiting_request_line():
            self._refuse(414, f"The request line is longer than {self.MAX_LENGTH:,} bytes.")
        else:
            self._refuse(431, f"The request headers exceed {self.totalHeadersSize:,} bytes.")

    def lineLengthExceeded(self, line: bytes) -> None:
        self._too_long()

    def lineReceived(self, line: bytes) -> None:
        if self._receivedHeaderSize + len(line) > self.totalHeadersSize:
            self._too_long()
            return
        super().lineReceived(line)

    def headerReceived(self, line: bytes) -> bool:
        if self._receivedHeaderCount >= self.maxHeaders:
            self._refuse(431, f"The request has more than {self.maxHeaders} headers.")
            return False
        return bool(super().headerReceived(line))

    def _respondToBadRequestAndDisconnect(self) -> None:
        self._refuse(400, "The request is not valid HTTP.")


def _protocol(factory: HTTPFactory) -> _GenericHTTPChannelProtocol:
    return _GenericHTTPChannelProtocol(LimitedHTTPChannel())


def install() -> None:
    """Make daphne's HTTP factory build the limited channel (daphne imports the app first)."""
    HTTPFactory.protocol = _protocol
