"""A run a signed-in user starts is theirs from any browser they sign in from, and nobody
else's: not another user's, not an anonymous session's (lists, events, report, socket)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from lab.asgi import application
from lab.events.models import Run
from tests.web.test_ownership import run_urls, share, start_run

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://127.0.0.1")


def signed_in(username: str) -> Client:
    user = User.objects.get_or_create(username=username)[0]
    client = Client()
    client.force_login(user)
    return client


def cookie_of(client: Client) -> tuple[bytes, bytes]:
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    return (b"cookie", f"{settings.SESSION_COOKIE_NAME}={key}".encode())


def test_a_users_run_records_the_user_and_an_anonymous_run_records_nobody():
    alice = signed_in("alice")
    assert start_run(alice).owner_user.username == "alice"
    assert start_run(Client()).owner_user is None


def test_the_user_sees_the_run_from_a_fresh_session_after_signing_in():
    run = start_run(signed_in("alice"))
    fresh = Client()
    for url in run_urls(run):
        assert fresh.get(url).status_code == 404, url
    fresh.force_login(User.objects.get(username="alice"))
    assert f"/runs/{run.id}/" in fresh.get("/").content.decode()
    assert fresh.get(f"/runs/{run.id}/").status_code == 200
    assert fresh.get(f"/runs/{run.id}/events.json").json()["run_id"] == str(run.id)
    # The report needs a started run; the point is that the owner reaches it.
    assert fresh.get(f"/runs/{run.id}/report.json").status_code in (200, 409)
    # ... and may share it, as the starting browser may.
    assert share(fresh, run).startswith("/share/")


def test_another_user_and_anonymous_sessions_get_404_and_no_listing():
    run = start_run(signed_in("alice"))
    bob = signed_in("bob")
    start_run(bob, "interruption")
    for stranger in (bob, Client()):
        assert str(run.id) not in stranger.get("/").content.decode()
        for url in run_urls(run):
            response = stranger.get(url)
            assert response.status_code == 404, url
            assert str(run.id) not in response.content.decode()
        assert stranger.post(f"/runs/{run.id}/share/").status_code == 404


def test_signing_out_leaves_the_run_with_the_user():
    alice = signed_in("alice")
    run = start_run(alice)
    alice.post("/accounts/logout/")
    assert alice.get(f"/runs/{run.id}/").status_code == 404
    assert str(run.id) not in alice.get("/").content.decode()


def test_an_anonymous_run_stays_with_its_session_across_a_sign_in():
    browser = Client()
    run = start_run(browser)
    browser.force_login(User.objects.create_user("carol"))
    assert browser.get(f"/runs/{run.id}/").status_code == 200
    # It was not started signed in, so it does not follow carol elsewhere.
    assert signed_in("carol").get(f"/runs/{run.id}/").status_code == 404


def test_a_share_link_of_a_users_run_still_opens_read_only():
    alice = signed_in("alice")
    run = start_run(alice)
    link = share(alice, run)
    viewer = signed_in("bob")
    assert "Watching: a read-only share link" in viewer.get(link).content.decode()
    assert viewer.get(f"{link}events.json").json()["run_id"] == str(run.id)
    assert viewer.get(f"/runs/{run.id}/").status_code == 404


async def _first_frames(run: Run, cookie: tuple[bytes, bytes] | None) -> tuple[str, object]:
    headers = [ORIGIN, *([cookie] if cookie else [])]
    socket = WebsocketCommunicator(application, f"/ws/runs/{run.id}/", headers=headers)
    connected, _ = await socket.connect()
    assert connected
    first = await socket.receive_from(timeout=30)
    closed = await socket.receive_output(timeout=30) if "no run with this id" in first else None
    await socket.disconnect()
    return first, closed


async def test_the_socket_lets_the_user_drive_from_a_fresh_session_and_refuses_others(
    fast_clock, settings
):
    settings.LAB_RECONNECT_GRACE_S = 0
    run = await database_sync_to_async(start_run)(await database_sync_to_async(signed_in)("alice"))
    bob = await database_sync_to_async(signed_in)("bob")
    for cookie in (cookie_of(bob), None):
        first, closed = await _first_frames(run, cookie)
        assert "no run with this id" in first
        assert closed == {"type": "websocket.close", "code": 4404}
    alice_elsewhere = await database_sync_to_async(signed_in)("alice")
    first, closed = await _first_frames(run, cookie_of(alice_elsewhere))
    assert 'data-role="driver"' in first and closed is None
