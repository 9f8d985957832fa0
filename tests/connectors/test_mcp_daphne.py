"""The MCP endpoint as the lab serves it, under daphne: a run set up over HTTP by its owner
hands out its MCP URL and token once, and the SDK's own client lists the run's tools there."""

from __future__ import annotations

import httpx2

from tests.connectors.mcp_serving import mcp_session, text_of


async def _owned_run(http: httpx2.AsyncClient) -> tuple[str, str]:
    """A run started from the picker: its id and the CSRF token of the owner's session."""
    await http.get("/")
    csrf = http.cookies["csrftoken"]
    started = await http.post(
        "/runs/",
        data={"scenario": "correction", "channel": "typed", "csrfmiddlewaretoken": csrf},
        headers={"X-CSRFToken": csrf},
    )
    assert started.status_code == 302, started.text
    return started.headers["location"].strip("/").split("/")[-1], csrf


async def test_an_owner_sets_up_a_run_for_mcp_and_the_sdk_client_lists_its_tools(lab_server):
    async with httpx2.AsyncClient(base_url=lab_server, timeout=60) as owner:
        run_id, csrf = await _owned_run(owner)
        issued = await owner.post(f"/runs/{run_id}/mcp/", headers={"X-CSRFToken": csrf})
        reissued = await owner.post(f"/runs/{run_id}/mcp/", headers={"X-CSRFToken": csrf})
    async with httpx2.AsyncClient(base_url=lab_server, timeout=60) as stranger:
        await stranger.get("/")
        refused = await stranger.post(
            f"/runs/{run_id}/mcp/", headers={"X-CSRFToken": stranger.cookies["csrftoken"]}
        )
    assert issued.status_code == 200
    assert "no-store" in issued.headers["cache-control"].split(", ")
    setup = issued.json()
    assert setup["url"] == f"{lab_server}/mcp/runs/{run_id}/"
    assert setup["tools"] == ["check_availability", "book_appointment"]
    assert setup["gated"] is True
    assert refused.status_code == 404

    async with mcp_session(setup["url"], reissued.json()["token"]) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        # The picker's run is the lab's own agent's: there is no outside agent's ToolBox.
        scripted = await session.call_tool("check_availability", {"day": "tuesday"})
    assert names == ["check_availability", "book_appointment"]
    assert scripted.is_error
    assert "the lab's own scripted agent" in text_of(scripted)

    async with httpx2.AsyncClient(timeout=60) as http:
        # A second token revoked the first.
        revoked = await http.post(
            setup["url"],
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={
                "Authorization": f"Bearer {setup['token']}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            },
        )
    assert revoked.status_code == 401
    assert revoked.json()["error"]["message"] == "this token opens no run's tools"
