"""The run socket opens only for a page of the lab's own origin: scheme, host and port."""

from __future__ import annotations

import re
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from lab.asgi import application
from lab.web.security import OriginValidator, origin_allowed, parse_origin

SOCKET = "/ws/runs/00000000-0000-0000-0000-000000000000/"


def scope(origin: str | None, host: str | None = "127.0.0.1:8102", scheme: str = "ws") -> Any:
    headers = [(b"origin", origin.encode())] if origin is not None else []
    headers += [(b"host", host.encode())] if host is not None else []
    return {"type": "websocket", "scheme": scheme, "headers": headers}


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:1",
        "http://127.0.0.1:9999",
        "https://127.0.0.1:8102",
        "http://127.0.0.1",
        "http://evil.example:8102",
        "http://127.0.0.1:8102.evil.example",
        "null",
        "",
        "http://127.0.0.1:8102/path",
        "http://user@127.0.0.1:8102",
        "ftp://127.0.0.1:8102",
        "http://127.0.0.1:99999",
    ],
)
def test_an_origin_other_than_the_serving_one_is_refused(origin):
    assert not origin_allowed(scope(origin))


@pytest.mark.parametrize(
    ("origin", "host", "scheme"),
    [
        ("http://127.0.0.1:8102", "127.0.0.1:8102", "ws"),
        ("HTTP://127.0.0.1:8102", "127.0.0.1:8102", "ws"),
        ("http://localhost:8102", "localhost:8102", "ws"),
        ("https://127.0.0.1:8102", "127.0.0.1:8102", "wss"),
        ("http://127.0.0.1", "127.0.0.1", "ws"),
        ("http://127.0.0.1:80", "127.0.0.1", "ws"),
        ("https://localhost", "localhost:443", "wss"),
    ],
)
def test_the_serving_origin_itself_is_allowed(origin, host, scheme):
    assert origin_allowed(scope(origin, host, scheme))


def test_a_host_the_lab_does_not_serve_is_refused_even_when_origin_matches_it():
    # DNS rebinding: evil.example resolves to 127.0.0.1, and its page names its own origin.
    assert not origin_allowed(scope("http://evil.example:8102", "evil.example:8102"))


def test_no_origin_header_is_refused():
    assert not origin_allowed(scope(None))


def test_an_in_process_connection_without_host_is_served_at_loopback():
    # runscenarios and the tests connect through WebsocketCommunicator, with no Host header.
    assert origin_allowed(scope("http://127.0.0.1", host=None))
    assert not origin_allowed(scope("http://127.0.0.1:9999", host=None))


def test_a_trusted_origin_is_allowed_beside_the_serving_one():
    trusted = [parse_origin("https://lab.example:8443")]
    assert origin_allowed(scope("https://lab.example:8443"), [o for o in trusted if o])
    assert not origin_allowed(scope("https://lab.example:8444"), [o for o in trusted if o])


@override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"))
def test_behind_a_tls_proxy_the_forwarded_scheme_is_the_serving_one():
    forwarded = scope("https://127.0.0.1:8102")
    forwarded["headers"].append((b"x-forwarded-proto", b"https"))
    assert origin_allowed(forwarded)
    assert not origin_allowed(scope("https://127.0.0.1:8102"))


def test_a_malformed_trusted_origin_stops_the_lab_at_start_up():
    with pytest.raises(ImproperlyConfigured, match=re.escape("LAB_TRUSTED_ORIGINS: 'lab.example'")):
        OriginValidator(application, trusted=["lab.example"])


async def _connects(origin: str, host: str = "127.0.0.1:8102") -> bool:
    communicator = WebsocketCommunicator(
        application, SOCKET, headers=[(b"origin", origin.encode()), (b"host", host.encode())]
    )
    connected, _ = await communicator.connect()
    await communicator.disconnect()
    return connected


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "origin", ["http://localhost:1", "http://127.0.0.1:9999", "https://127.0.0.1:8102"]
)
async def test_the_lab_refuses_the_handshake_of_a_foreign_origin(origin):
    assert not await _connects(origin)


@pytest.mark.django_db(transaction=True)
async def test_the_lab_accepts_the_handshake_of_its_own_origin():
    # The run does not exist, so the consumer closes it (4404) after the origin check let it in.
    assert await _connects("http://127.0.0.1:8102")
