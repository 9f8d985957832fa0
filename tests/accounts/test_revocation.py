"""Open sockets stop at once when the right they were opened with goes: a queue socket when its
membership is deleted, its user signs out or its session disappears; a run's owner sockets
when the owner signs out; a share link's when the link is replaced."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.test import Client

from lab.accounts.models import Membership, Tenant
from lab.accounts.roles import Role
from lab.asgi import application
from lab.audit.services import audit_records_store
from lab.events.models import Run
from lab.operator.consumers import CLOSE_LOG_IN
from lab.runs.ownership import share_link_create
from lab.web.consumers import CLOSE_REVOKED
from tests.audit.calls import demo_calls
from tests.operator.conftest import graded, member

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://127.0.0.1")
WAIT_S = 30


def _signed_in(role: Role) -> tuple[Client, User]:
    tenant, _ = Tenant.objects.get_or_create(slug="demo")
    user = member(f"{role.value}-{User.objects.count()}", tenant, role)
    client = Client()
    client.force_login(user)
    return client, user


def _cookie(client: Client) -> tuple[bytes, bytes]:
    found = client.cookies.get(settings.SESSION_COOKIE_NAME)
    return (b"cookie", f"{settings.SESSION_COOKIE_NAME}={found.value if found else ''}".encode())


async def _open(client: Client, path: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, path, headers=[ORIGIN, _cookie(client)])
    connected, _ = await communicator.connect(timeout=WAIT_S)
    assert connected
    return communicator


async def _closed_with(communicator: WebsocketCommunicator) -> int:
    """The close code, skipping any text sent before it; a card arriving first fails."""
    async with asyncio.timeout(WAIT_S):
        while True:
            message = await communicator.receive_output(timeout=WAIT_S)
            if message["type"] == "websocket.close":
                return message["code"]
            assert "queue-card" not in message.get("text", ""), "a card reached a revoked socket"


def _store_flags() -> None:
    audit_records_store(graded(demo_calls()[0]))


async def _queue(role: Role = Role.OPERATOR) -> tuple[Client, User, WebsocketCommunicator]:
    client, user = await database_sync_to_async(_signed_in)(role)
    return client, user, await _open(client, "/ws/t/demo/queue/")


async def test_a_deleted_membership_closes_the_queue_socket_and_no_card_follows():
    _, user, page = await _queue()
    try:
        await database_sync_to_async(lambda: Membership.objects.filter(user=user).delete())()
        assert await _closed_with(page) == CLOSE_LOG_IN
        await database_sync_to_async(_store_flags)()
        assert await page.receive_nothing(timeout=1)
    finally:
        await page.disconnect()


async def test_signing_out_closes_the_queue_socket():
    client, _, page = await _queue()
    try:
        await database_sync_to_async(client.logout)()
        assert await _closed_with(page) == CLOSE_LOG_IN
    finally:
        await page.disconnect()


async def test_a_session_gone_without_a_sign_out_is_caught_at_the_next_card():
    client, _, page = await _queue()
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    try:
        # No signal says so (an expired or cleared session): the push itself checks.
        await database_sync_to_async(lambda: Session.objects.filter(session_key=key).delete())()
        await database_sync_to_async(_store_flags)()
        assert await _closed_with(page) == CLOSE_LOG_IN
    finally:
        await page.disconnect()


async def test_a_demoted_member_gets_the_viewers_card_at_the_next_push():
    _, user, page = await _queue()
    try:
        await database_sync_to_async(
            lambda: Membership.objects.filter(user=user).update(role=Role.VIEWER.value)
        )()
        await database_sync_to_async(_store_flags)()
        html = await page.receive_from(timeout=WAIT_S)
        assert "queue-card" in html and 'name="action"' not in html
    finally:
        await page.disconnect()


async def test_the_other_members_sockets_keep_receiving(fast_clock):
    _, leaving, gone = await _queue()
    _, _, staying = await _queue(Role.ADMIN)
    try:
        await database_sync_to_async(lambda: Membership.objects.filter(user=leaving).delete())()
        assert await _closed_with(gone) == CLOSE_LOG_IN
        await database_sync_to_async(_store_flags)()
        assert "queue-card" in await staying.receive_from(timeout=WAIT_S)
    finally:
        await gone.disconnect()
        await staying.disconnect()


def _run_of(client: Client) -> str:
    response = client.post("/runs/", {"scenario": "correction"})
    assert response.status_code == 302
    return response["Location"].split("/")[2]


async def test_signing_out_closes_the_owners_driving_and_watching_run_sockets(fast_clock):
    client, _ = await database_sync_to_async(_signed_in)(Role.OWNER)
    run_id = await database_sync_to_async(_run_of)(client)
    driver = await _open(client, f"/ws/runs/{run_id}/")
    watcher = await _open(client, f"/ws/runs/{run_id}/")
    try:
        assert 'data-role="driver"' in await driver.receive_from(timeout=WAIT_S)
        assert 'data-role="watcher"' in await watcher.receive_from(timeout=WAIT_S)
        await database_sync_to_async(client.logout)()
        assert await _closed_with(watcher) == CLOSE_REVOKED
        assert await _closed_with(driver) == CLOSE_REVOKED
    finally:
        await driver.disconnect()
        await watcher.disconnect()


async def test_signing_out_closes_a_run_socket_opened_before_signing_in(fast_clock):
    client = Client()
    run_id = await database_sync_to_async(_run_of)(client)
    page = await _open(client, f"/ws/runs/{run_id}/")
    try:
        assert 'data-role="driver"' in await page.receive_from(timeout=WAIT_S)
        # Signing in gives the session a new key and keeps its owner token; signing out
        # drops the token, and the socket opened with it closes.
        _, user = await database_sync_to_async(_signed_in)(Role.VIEWER)
        await database_sync_to_async(client.force_login)(user)
        await database_sync_to_async(client.logout)()
        assert await _closed_with(page) == CLOSE_REVOKED
    finally:
        await page.disconnect()


async def test_replacing_a_share_link_closes_the_sockets_watching_through_the_old_one():
    client = Client()
    run_id = await database_sync_to_async(_run_of)(client)
    run = await database_sync_to_async(Run.objects.get)(pk=run_id)
    old = await database_sync_to_async(share_link_create)(run=run)
    shared = await _open(Client(), f"/ws/share/{old}/")
    try:
        assert 'data-role="shared"' in await shared.receive_from(timeout=WAIT_S)
        new = await database_sync_to_async(share_link_create)(run=run)
        assert await _closed_with(shared) == CLOSE_REVOKED
        again = await _open(Client(), f"/ws/share/{new}/")
        assert 'data-role="shared"' in await again.receive_from(timeout=WAIT_S)
        await again.disconnect()
    finally:
        await shared.disconnect()
