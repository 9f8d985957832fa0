"""The run page's MCP setup: an outside agent's run offers its owner the tools' URL and a token,
shown once; nobody else gets one, and an ended run gives none."""

from __future__ import annotations

import pytest
from django.test import Client

from lab.connectors.mcp_access import McpOpened, McpRefused, mcp_access
from lab.connectors.registry import AgentSpec
from lab.events import store
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from tests.web.owners import act_as_owner

pytestmark = pytest.mark.django_db

OUTSIDE = AgentSpec(connector="pipecat", endpoint="ws://127.0.0.1:9/ws")


def outside_run(mode: Mode = Mode.GUARDED):
    return run_start(scenario_id="correction", mode=mode, channel=Channel.TYPED, agent=OUTSIDE)


def test_an_outside_agents_run_page_offers_its_owner_the_mcp_setup_and_the_lab_agents_does_not():
    client = Client()
    act_as_owner(client)
    outside = outside_run()
    scripted = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED)
    assert "Open this run's tools over MCP" in client.get(f"/runs/{outside.id}/").text
    assert "tools over MCP" not in client.get(f"/runs/{scripted.id}/").text


def test_the_owner_gets_the_url_and_a_working_token_once_as_a_fragment_or_json():
    client = Client()
    act_as_owner(client)
    run = outside_run(Mode.UNGUARDED)
    fragment = client.post(f"/runs/{run.id}/mcp/", headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert "no-store" in fragment["Cache-Control"].split(", ")
    html = fragment.text
    assert f"http://testserver/mcp/runs/{run.id}/" in html
    assert "as-is: calls go straight to the sandbox" in html
    token = html.split('id="mcp-token">')[1].split("<")[0]
    assert isinstance(mcp_access(token=token, run_id=str(run.id)), McpOpened)

    replaced = client.post(f"/runs/{run.id}/mcp/").json()
    assert replaced["tools"] == ["check_availability", "book_appointment"]
    assert replaced["gated"] is False
    # The new token opens the run; the one shown before it no longer does.
    assert isinstance(mcp_access(token=replaced["token"], run_id=str(run.id)), McpOpened)
    revoked = mcp_access(token=token, run_id=str(run.id))
    assert isinstance(revoked, McpRefused) and revoked.status == 401


def test_nobody_else_gets_a_token_and_an_ended_run_gives_none():
    run = outside_run()
    stranger = Client()
    assert stranger.post(f"/runs/{run.id}/mcp/").status_code == 404
    owner = Client()
    act_as_owner(owner)
    store.run_mark_ended(run=run)
    ended = owner.post(f"/runs/{run.id}/mcp/")
    assert ended.status_code == 409
    assert ended.json() == {"error": "This run has ended; its tools are closed."}
    assert run.mcp_hash is None
