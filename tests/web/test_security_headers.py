"""Every HTTP response carries the security headers, and no page needs inline script or style."""

from __future__ import annotations

import pytest
from asgiref.testing import ApplicationCommunicator
from channels.testing import HttpCommunicator

from lab.asgi import application
from lab.web.security import CONTENT_SECURITY_POLICY, SecurityHeaders

EXPECTED = {
    b"x-content-type-options": b"nosniff",
    b"x-frame-options": b"DENY",
    b"referrer-policy": b"same-origin",
    b"content-security-policy": CONTENT_SECURITY_POLICY.encode(),
}


async def _get(path: str, host: bytes = b"127.0.0.1") -> tuple[int, dict[bytes, bytes]]:
    """Status and (lower-cased) headers of one GET through the lab's ASGI application."""
    scope = {
        "type": "http",
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", host)],
    }
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": b""})
    start = await communicator.receive_output(timeout=30)
    while (await communicator.receive_output(timeout=30)).get("more_body"):
        pass  # a static file arrives in several parts
    await communicator.wait(timeout=30)  # the handler closes the request body as it ends
    return start["status"], {name.lower(): value for name, value in start["headers"]}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("path", "host", "status"),
    [
        ("/", b"127.0.0.1", 200),
        ("/reports/import/", b"127.0.0.1", 200),
        ("/static/css/lab.css", b"127.0.0.1", 200),
        ("/static/../lab/settings.py", b"127.0.0.1", 404),
        ("/nowhere/", b"127.0.0.1", 404),
        ("/", b"evil.example", 400),
    ],
)
async def test_every_kind_of_response_carries_the_security_headers(path, host, status):
    got, headers = await _get(path, host)
    assert got == status
    for name, value in EXPECTED.items():
        assert headers.get(name) == value, name


async def test_a_server_error_carries_them_too():
    async def failing(scope, receive, send):
        await send({"type": "http.response.start", "status": 500, "headers": []})
        await send({"type": "http.response.body", "body": b"boom"})

    communicator = HttpCommunicator(SecurityHeaders(failing), "GET", "/")
    response = await communicator.get_response()
    assert response["status"] == 500
    assert EXPECTED.items() <= dict(response["headers"]).items()


async def test_a_header_the_response_sets_itself_is_kept():
    async def framed(scope, receive, send):
        headers = [(b"x-frame-options", b"SAMEORIGIN")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    response = await HttpCommunicator(SecurityHeaders(framed), "GET", "/").get_response()
    assert [v for k, v in response["headers"] if k == b"x-frame-options"] == [b"SAMEORIGIN"]


def test_the_policy_allows_no_inline_or_evaluated_script_and_no_framing():
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["object-src"] == "'none'"
    assert "unsafe-eval" not in CONTENT_SECURITY_POLICY
