"""A registered agent's stable sandbox: its token shown once and kept hashed, its tool calls
matched to that agent's live call alone, and a call that matches none refused and recorded."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.test import Client

from lab.accounts.agent_sandbox import sandbox_token_issue
from lab.accounts.models import Agent, Membership, Tenant
from lab.connectors.live_calls import LiveCall, call_closed, call_opened
from lab.web.sandbox_http import sandbox_app
from tests.web.test_sandbox_http import Recorded

BOT = "/sandbox/agents/demo/bot/tools/find_slots"


@pytest.mark.django_db
def test_a_registered_agents_token_is_shown_once_and_kept_hashed() -> None:
    tenant = Tenant.objects.create(slug="demo")
    user = User.objects.create_user("owner")
    Membership.objects.create(user=user, tenant=tenant, role="owner")
    client = Client()
    client.force_login(user)
    added = client.post(
        "/t/demo/agents/", {"slug": "bot", "connector": "twilio", "endpoint": "wss://8.8.8.8/m"}
    )
    assert added.status_code == 302
    page = client.get("/t/demo/agents/").content.decode()
    [token] = re.findall(r'<span id="sandbox-token">([^<]+)</span>', page)
    assert "http://testserver/sandbox/agents/demo/bot/tools/" in page
    agent = Agent.objects.get()
    assert agent.sandbox_digest == hashlib.sha256(token.encode()).hexdigest()
    again = client.get("/t/demo/agents/").content.decode()
    assert token not in again and "token set" in again
    # A new one replaces it, shown once too.
    client.post("/t/demo/agents/bot/sandbox-token/")
    [new] = re.findall(
        r'id="sandbox-token">([^<]+)<', client.get("/t/demo/agents/").content.decode()
    )
    assert new != token and Agent.objects.get().sandbox_digest != agent.sandbox_digest


@pytest.fixture
async def agent_token() -> str:
    def registered() -> str:
        demo = Tenant.objects.create(slug="demo")
        return sandbox_token_issue(agent=Agent.objects.create(tenant=demo, slug="bot"))

    return await sync_to_async(registered)()


async def _client(token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=sandbox_app),
        base_url="http://lab",
        headers={"Authorization": f"Bearer {token}"},
    )


@pytest.fixture
def live() -> AsyncIterator[dict[str, Recorded]]:
    opened = {"demo-1": Recorded(), "acme-1": Recorded()}
    call_opened(LiveCall("demo-1", "ws://bot/media", opened["demo-1"], "demo/bot"))
    call_opened(LiveCall("acme-1", "ws://bot/media", opened["acme-1"], "acme/bot"))
    yield opened
    for call_id in (*opened, "demo-2"):
        call_closed(call_id)


@pytest.mark.django_db(transaction=True)
async def test_the_agents_sandbox_reaches_its_own_live_call_and_refuses_the_rest(
    agent_token: str, live: dict[str, Recorded]
) -> None:
    async with await _client(agent_token) as client:
        # Two calls are live, one of them this agent's: a call naming none finds it.
        answered = await client.post(BOT, json={"arguments": {"day": "tuesday"}})
        assert answered.status_code == 200 and len(live["demo-1"].calls) == 1
        other = await client.post(BOT, json={"call_id": "acme-1"})
        assert other.status_code == 404 and other.json()["kind"] == "no_live_call"
        assert "no live call of demo/bot has the id 'acme-1'" in other.json()["error"]
        call_opened(LiveCall("demo-2", "ws://bot/media", Recorded(), "demo/bot"))
        ambiguous = await client.post(BOT, json={})
        assert (
            ambiguous.status_code == 404
            and "2 calls of demo/bot are live" in (ambiguous.json()["error"])
        )
    assert not live["acme-1"].calls
    agent = await Agent.objects.aget(slug="bot")
    assert agent.sandbox_refusals == 2 and "find_slots: 2 calls" in agent.sandbox_last_refusal
    async with await _client("a-wrong-token") as client:
        refused = await client.post(BOT, json={"call_id": "demo-1"})
    assert refused.status_code == 401 and len(live["demo-1"].calls) == 1
