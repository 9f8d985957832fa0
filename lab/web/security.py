"""ASGI guards around the whole lab: security headers on every HTTP response (pages, static files,
404s and errors alike) and a WebSocket Origin check that compares scheme, host and port."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http.request import validate_host

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]
Origin = tuple[str, str, int]

# No inline or evaluated script anywhere: every script is a file served from /static/.
# Style attributes stay allowed (the latency bars set their width inline); <style> elements do not.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "style-src-attr 'unsafe-inline'",
        "img-src 'self' data:",
        # blob: plays a recording the reader chose from disk, once checked against its digest.
        "media-src 'self' blob:",
        "connect-src 'self'",
        "worker-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
DEFAULT_PORTS = {"http": 80, "https": 443}


class SecurityHeaders:
    """Adds each security header a response lacks, whoever wrote the response."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                missing = [(n, v) for n, v in SECURITY_HEADERS if n not in present]
                message["headers"] = [*message.get("headers", []), *missing]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def parse_origin(text: str) -> Origin | None:
    """(scheme, host, port) of an origin such as http://127.0.0.1:8000; None if it is not one."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host or parts.path or parts.query or parts.username:
        return None
    return scheme, host, port if port is not None else DEFAULT_PORTS[scheme]


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _scheme(scope: Scope) -> str:
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy is not None:
        header, secure_value = proxy
        name = header.removeprefix("HTTP_").replace("_", "-").lower().encode()
        if (_header(scope, name) or "").split(",")[0].strip() == secure_value:
            return "https"
    return "https" if scope.get("scheme") in ("wss", "https") else "http"


def serving_origin(scope: Scope) -> Origin | None:
    """The origin the socket was reached at: the connection's scheme and its Host header."""
    scheme = _scheme(scope)
    host = _header(scope, b"host")
    if host is None:
        server = scope.get("server")
        # No Host and no server: an in-process connection (tests, runscenarios), not a network one.
        host = f"{server[0]}:{server[1]}" if server else "127.0.0.1"
    served = parse_origin(f"{scheme}://{host}")
    if served is None:
        return None
    name = f"[{served[1]}]" if ":" in served[1] else served[1]  # ALLOWED_HOSTS spells IPv6 so
    return served if validate_host(name, settings.ALLOWED_HOSTS) else None


def origin_allowed(scope: Scope, trusted: Iterable[Origin] = ()) -> bool:
    """The Origin header names exactly the origin that serves the lab, or one it trusts."""
    header = _header(scope, b"origin")
    served = serving_origin(scope)
    if header is None or served is None:
        return False
    origin = parse_origin(header)
    return origin is not None and (origin == served or origin in trusted)


def trusted_origins(texts: Iterable[str]) -> tuple[Origin, ...]:
    """LAB_TRUSTED_ORIGINS parsed; a malformed entry stops the lab at start-up."""
    origins = []
    for text in texts:
        origin = parse_origin(text)
        if origin is None:
            raise ImproperlyConfigured(
                f"LAB_TRUSTED_ORIGINS: {text!r} is not an origin such as https://lab.example:8443"
            )
        origins.append(origin)
    return tuple(origins)


class OriginValidator:
    """Refuses a WebSocket handshake whose Origin is not the lab's own (scheme, host and port)."""

    def __init__(self, app: App, trusted: Iterable[str] | None = None) -> None:
        self.app = app
        self.trusted = trusted_origins(settings.LAB_TRUSTED_ORIGINS if trusted is None else trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not origin_allowed(scope, self.trusted):
            await WebsocketDenier()(scope, receive, send)
            return
        await self.app(scope, receive, send)
