"""One signed POST of an alert body to an endpoint, and what came of it (never raises).

The URL is checked again here (lab.alerts.targets: DNS may have changed since the form), and the
connection goes to an address that passed the check, with the Host header and TLS name kept.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any

from lab.alerts.signing import EVENT_ID_HEADER, SIGNATURE_HEADER, signature_header
from lab.alerts.targets import HostRule, Resolver, Target, TargetRefused, check_target
from lab.alerts.targets import system_resolver as _system_resolver

USER_AGENT = "voice-reliability-lab-alerts/1"
# Enough of an answer to free the connection; the lab reads nothing from it.
_READ_LIMIT = 64 * 1024
REFUSED_PREFIX = "refused: "


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str
    duration_ms: float

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def _connect(address: str, port: int, timeout_s: float | None) -> socket.socket:
    return socket.create_connection((address, port), timeout=timeout_s)


class _Deadline:
    """Cuts the connection's socket when the send's time is up. http.client's timeout holds
    each read, so a receiver that trickles its answer would otherwise hold a send for ever."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.passed = False
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
            if self.passed:
                self._shut()

    def _cut(self) -> None:
        with self._lock:
            self.passed = True
            self._shut()

    def _shut(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)  # a blocked read returns at once


class _PinnedHTTP(http.client.HTTPConnection):
    """An HTTP connection to a checked address; `host` stays the name the URL gave."""

    def __init__(self, target: Target, address: str, deadline: _Deadline) -> None:
        super().__init__(target.host, target.port, timeout=deadline.seconds)
        self._address = address
        self._deadline = deadline

    def connect(self) -> None:
        self.sock = _connect(self._address, self.port, self.timeout)
        self._deadline.watch(self.sock)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """The same over TLS: SNI and certificate checked against the URL's host name."""

    def __init__(self, target: Target, address: str, deadline: _Deadline) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(target.host, target.port, timeout=deadline.seconds, context=self._tls)
        self._address = address
        self._deadline = deadline

    def connect(self) -> None:
        raw = _connect(self._address, self.port, self.timeout)
        self._deadline.watch(raw)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


def post_alert(
    *,
    url: str,
    secret: str,
    event_id: str,
    body: bytes,
    timeout_s: float,
    allowed: frozenset[HostRule] = frozenset(),
    own: tuple[str, int] | None = None,
    resolve: Resolver = _system_resolver,
) -> Outcome:
    """POST body signed with secret; any answer, failure or refusal comes back as an Outcome."""
    started = time.perf_counter()

    def took() -> float:
        return (time.perf_counter() - started) * 1000

    try:
        target = check_target(url, allowed=allowed, own=own, resolve=resolve)
    except TargetRefused as refusal:
        return Outcome(None, f"{REFUSED_PREFIX}{refusal}"[:500], took())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_ID_HEADER: event_id,
        SIGNATURE_HEADER: signature_header(secret, body, int(time.time())),
    }
    status: int | None = None
    error = ""
    for address in target.addresses:
        try:
            status, error = _send(target, address, headers, body, timeout_s)
            break
        except (OSError, http.client.HTTPException, ValueError) as failure:
            # The next checked address, if any; the last failure is the one recorded.
            error = _reason(failure)
    return Outcome(status, error[:500], took())


def _send(
    target: Target, address: str, headers: dict[str, str], body: bytes, timeout_s: float
) -> tuple[int, str]:
    kind = _PinnedHTTPS if target.scheme == "https" else _PinnedHTTP
    with _Deadline(timeout_s) as deadline:
        connection = kind(target, address, deadline)
        try:
            connection.request("POST", target.path, body=body, headers=headers)
            response = connection.getresponse()
            response.read(_READ_LIMIT)
        except (OSError, http.client.HTTPException) as failure:
            if deadline.passed:
                raise TimeoutError(f"no whole answer within {timeout_s:g} s") from failure
            raise
        finally:
            connection.close()
        # A cut can also read as an answer's end (http.client takes the half it has).
        if deadline.passed:
            raise TimeoutError(f"no whole answer within {timeout_s:g} s")
    # A redirect is not followed (a redirected POST arrives as a bodiless GET elsewhere).
    ok = 200 <= response.status < 300
    return response.status, "" if ok else f"HTTPError: {response.reason}"


def _reason(failure: Any) -> str:
    reason = getattr(failure, "reason", None)
    return f"{type(failure).__name__}: {reason if reason is not None else failure}"
