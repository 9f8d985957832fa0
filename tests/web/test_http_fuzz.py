"""Malformed, oversized and traversal requests against a real daphne: each one answered, none a 500,
every answer with the security headers."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

# Generous on a loaded machine; only a request the server never answers runs into it.
ANSWER_TIMEOUT_S = 30
REQUIRED_HEADERS = (
    b"content-security-policy",
    b"x-content-type-options",
    b"x-frame-options",
    b"referrer-policy",
)
PATHS = (
    b"/",
    b"/static/css/lab.css",
    b"/static/js/run.js",
    b"/static/../lab/settings.py",
    b"/static/../../../../etc/passwd",
    b"/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    b"/static/..%2f..%2f..%2fetc%2fpasswd",
    b"/static/....//....//etc/passwd",
    b"/static//etc/passwd",
    b"/static/%2fetc%2fpasswd",
    b"/static/css/%00",
    b"/static/a%00.js",
    b"/static/%ff%fe",
    b"/static/..\\..\\..\\windows\\win.ini",
    b"/static/" + b"a" * 300,
    b"/static/",
    b"/static/css/",
    b"/static/css/lab.css?x=../../etc/passwd",
    b"/runs/not-a-uuid/",
    b"/runs/00000000-0000-0000-0000-000000000000/events.json",
    b"/runs/00000000-0000-0000-0000-000000000000/report.json",
    b"/reports/00000000-0000-0000-0000-000000000000/replay/",
    b"/reports/keys/99999/remove/",
    b"/reports/schema.json",
    b"/ws/runs/00000000-0000-0000-0000-000000000000/",
    b"/mcp/",
    b"/mcp/runs/not-a-uuid/",
    b"/mcp/runs/00000000-0000-0000-0000-000000000000/",
    b"/mcp/runs/00000000-0000-0000-0000-000000000000/%00",
    b"/mcp/runs/%ff%fe/",
    b"/%",
    b"/%zz",
    b"/?a=%ff%fe",
    b"/\xc3\xa9",
    b"/\xff\xfe",
    b"*",
    b"http://evil.example/",
    b"/?" + b"q=" * 4000,
)
METHODS = (b"GET", b"HEAD", b"POST", b"OPTIONS", b"DELETE", b"PUT", b"PATCH", b"TRACE")


def _request(
    method: bytes = b"GET",
    path: bytes = b"/",
    *,
    version: bytes = b"HTTP/1.1",
    headers: tuple[bytes, ...] = (b"Host: 127.0.0.1",),
    body: bytes = b"",
) -> bytes:
    lines = [b"%s %s %s" % (method, path, version), *headers, b"Connection: close"]
    if body or method in (b"POST", b"PUT"):
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def battery() -> Iterator[tuple[str, bytes]]:
    for path in PATHS:
        for method in METHODS:
            yield f"{method.decode()} {path[:60]!r}", _request(method, path)
    for version in (b"HTTP/1.0", b"HTTP/2.0", b"HTTP/9.9", b"HTCPCP/1.0", b"http/1.1", b""):
        yield f"version {version!r}", _request(version=version)
    for host in (b"evil.example", b"127.0.0.1:99999", b"", b"[::1", b"a" * 300, b"127.0.0.1\x01"):
        yield f"host {host[:20]!r}", _request(headers=(b"Host: " + host,))
    yield "no host", _request(headers=())
    yield "two hosts", _request(headers=(b"Host: 127.0.0.1", b"Host: evil.example"))
    for length in (b"-1", b"abc", b"1, 2", b"0x10", b"+5"):
        yield (
            f"content-length {length!r}",
            _request(
                b"POST", b"/reports/", headers=(b"Host: 127.0.0.1", b"Content-Length: " + length)
            ),
        )
    yield (
        "two content-lengths",
        _request(
            b"POST",
            b"/reports/",
            headers=(b"Host: 127.0.0.1", b"Content-Length: 2", b"Content-Length: 3"),
            body=b"ab",
        ),
    )
    for coding in (b"gzip", b"chunked, gzip", b"identity, chunked"):
        yield (
            f"transfer-encoding {coding!r}",
            _request(
                b"POST", b"/reports/", headers=(b"Host: 127.0.0.1", b"Transfer-Encoding: " + coding)
            ),
        )
    yield (
        "bad chunk",
        (
            b"POST /reports/ HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"zz\r\nhello\r\n0\r\n\r\n"
        ),
    )
    for content_type in (
        b"multipart/form-data",
        b"multipart/form-data; boundary=",
        b"multipart/form-data; boundary=" + b"b" * 2000,
        b"application/json",
        b"text/plain; charset=nonsense",
    ):
        yield (
            f"upload {content_type[:40]!r}",
            _request(
                b"POST",
                b"/reports/",
                headers=(b"Host: 127.0.0.1", b"Content-Type: " + content_type),
                body=b"--b\r\nnot really multipart\r\n--b--\r\n",
            ),
        )
    for size in (16_400, 65_536, 1_000_000):
        yield f"request line of {size:,} bytes", _request(path=b"/" + b"a" * size)
        yield (
            f"header line of {size:,} bytes",
            _request(headers=(b"Host: 127.0.0.1", b"X-Big: " + b"b" * size)),
        )
    yield (
        "501 headers",
        _request(headers=(b"Host: 127.0.0.1", *(b"X-%d: v" % i for i in range(501)))),
    )
    yield (
        "17 KB of headers",
        _request(
            headers=(b"Host: 127.0.0.1", *(b"X-%d: %s" % (i, b"v" * 1000) for i in range(17)))
        ),
    )
    for header in (
        b"X-Nul: a\x00b",
        b"Bad Name: v",
        b"NoColon",
        b" folded: continuation",
        b"X-Latin: \xe9\xff",
        b"Cookie: " + b"sessionid=" + b"x" * 5000,
        b"Cookie: csrftoken=\x7f; sessionid=../../",
        b"X-Forwarded-Proto: https",
    ):
        yield f"header {header[:24]!r}", _request(headers=(b"Host: 127.0.0.1", header))
    for junk in (
        b"\x00\x01\x02\r\n\r\n",
        b"\r\n\r\n",
        b"GET\r\n\r\n",
        b"\x16\x03\x01\x00\xa5\x01\r\n\r\n",
    ):
        yield f"junk {junk[:12]!r}", junk


def exchange(host: str, port: int, raw: bytes) -> bytes:
    """Send raw on a fresh connection and read the whole answer (or what came before a close)."""
    with socket.create_connection((host, port), timeout=ANSWER_TIMEOUT_S) as sock:
        # The server may answer and stop reading before the request ends.
        with contextlib.suppress(OSError):
            sock.sendall(raw)
        answer = b""
        while chunk := _recv(sock):
            answer += chunk
        return answer


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


def _status(answer: bytes) -> int | None:
    line = answer.split(b"\r\n", 1)[0].split(b" ")
    return int(line[1]) if len(line) >= 2 and line[0].startswith(b"HTTP/") else None


def _head(answer: bytes) -> set[bytes]:
    head = answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]
    return {line.split(b":", 1)[0].strip().lower() for line in head}


def test_the_battery_is_a_few_hundred_requests():
    requests = list(battery())
    assert len(requests) >= 250
    assert len({raw for _, raw in requests}) == len(requests)


def test_every_malformed_request_gets_an_answer_and_none_is_a_server_error(lab_server):
    url = urlsplit(lab_server)
    assert url.hostname and url.port
    answers = {name: exchange(url.hostname, url.port, raw) for name, raw in battery()}
    unanswered = [name for name, answer in answers.items() if _status(answer) is None]
    errors = {name: _status(a) for name, a in answers.items() if (_status(a) or 0) >= 500}
    bare = {
        name: sorted(set(REQUIRED_HEADERS) - _head(answer))
        for name, answer in answers.items()
        if not set(REQUIRED_HEADERS) <= _head(answer)
    }
    assert not unanswered, unanswered
    assert not errors, errors
    assert not bare, bare
    assert _status(answers["request line of 65,536 bytes"]) == 414
    assert _status(answers["header line of 65,536 bytes"]) == 431
    assert _status(answers["501 headers"]) == 431
    assert _status(answers["17 KB of headers"]) == 431
    assert _status(answers["GET b'/static/../../../../etc/passwd'"]) == 404
    assert _status(answers["GET b'/static/css/lab.css'"]) == 200
