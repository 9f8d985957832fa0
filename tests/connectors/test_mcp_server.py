"""A run's sandboxed tools over MCP, reached by the SDK's own client over real HTTP: what is
offered, who is let in, and what a call's outcome looks like on the wire."""

from __future__ import annotations

import httpx2
import pytest
from channels.db import database_sync_to_async
from mcp.shared.exceptions import MCPError

from lab.connectors.interface import ToolCall, ToolResult
from lab.connectors.mcp_access import mcp_token_issue
from lab.connectors.mcp_runs import LIVE
from lab.connectors.registry import AgentSpec
from lab.connectors.tool_specs import BookAppointment, CheckAvailability, IssueRefund, LookUpOrder
from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from tests.connectors.mcp_serving import lab_served, mcp_session, mcp_url, text_of

pytestmark = pytest.mark.django_db(transaction=True)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


class RecordingToolBox:
    """Answers each call with the next prepared result and keeps what it was asked."""

    def __init__(self, *results: ToolResult) -> None:
        self.results = list(results)
        self.calls: list[ToolCall] = []

    async def call(self, call: ToolCall) -> ToolResult:
        self.calls.append(call)
        prepared = self.results.pop(0)
        return ToolResult(call.call_id, prepared.kind, prepared.content, prepared.reason)


OUTSIDE = AgentSpec(connector="pipecat", endpoint="ws://127.0.0.1:9/ws")


@database_sync_to_async
def mcp_run(scenario_id: str = "correction", agent: AgentSpec | None = OUTSIDE) -> tuple[Run, str]:
    """A run of an outside agent (never connected here) with its MCP token."""
    run = run_start(scenario_id=scenario_id, mode=Mode.GUARDED, channel=Channel.TYPED, agent=agent)
    return run, mcp_token_issue(run=run)


@pytest.mark.parametrize("era", ["handshake", "modern"])
async def test_it_lists_exactly_the_tools_of_the_runs_scenario_with_their_schemas(era):
    booking, booking_token = await mcp_run("correction")
    refund, refund_token = await mcp_run("refund_correction")
    async with lab_served() as base:
        booking_url, refund_url = mcp_url(base, str(booking.id)), mcp_url(base, str(refund.id))
        async with mcp_session(booking_url, booking_token, era=era) as session:
            listed = (await session.list_tools()).tools
            assert session.protocol_version == (
                "2025-11-25" if era == "handshake" else "2026-07-28"
            )
        async with mcp_session(refund_url, refund_token, era=era) as session:
            refund_listed = (await session.list_tools()).tools
    assert [(t.name, t.input_schema) for t in listed] == [
        ("check_availability", CheckAvailability.model_json_schema()),
        ("book_appointment", BookAppointment.model_json_schema()),
    ]
    assert "after the caller confirmed" in (listed[1].description or "")
    assert [(t.name, t.input_schema) for t in refund_listed] == [
        ("look_up_order", LookUpOrder.model_json_schema()),
        ("issue_refund", IssueRefund.model_json_schema()),
    ]


async def test_it_refuses_a_missing_or_unknown_token_with_401_and_says_why():
    run, _token = await mcp_run()
    async with lab_served() as base, httpx2.AsyncClient() as http:
        url = mcp_url(base, str(run.id))
        missing = await http.post(url, json=INITIALIZE, headers=ACCEPT)
        unknown = await http.post(
            url, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer not-the-token"}
        )
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert missing.json()["error"]["data"] == {"kind": "token_missing", "status": 401}
    assert "Bearer" in missing.json()["error"]["message"]
    assert unknown.status_code == 401
    assert unknown.json()["error"]["message"] == "this token opens no run's tools"


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
async def test_only_post_is_served_so_no_event_stream_outlives_a_run_or_its_token(method):
    """A valid token's GET would open the transport's standalone SSE stream, which in stateless
    mode carries nothing and stayed open with pings after the run ended: refused instead."""
    run, token = await mcp_run()
    headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
    async with lab_served() as base, httpx2.AsyncClient(timeout=5.0) as http:
        refused = await http.request(method, mcp_url(base, str(run.id)), headers=headers)
    assert refused.status_code == 405
    assert refused.headers["allow"] == "POST"
    assert refused.headers["content-type"] == "application/json"
    error = refused.json()["error"]
    assert error["data"] == {"kind": "method_not_allowed", "status": 405}
    assert "POST" in error["message"]


async def test_the_sdk_client_with_a_wrong_token_is_told_why_it_gets_no_session():
    run, _token = await mcp_run()
    async with lab_served() as base:
        with pytest.raises(ExceptionGroup) as refused:
            async with mcp_session(mcp_url(base, str(run.id)), "wrong"):
                pass
    (error,) = _leaves(refused.value)
    assert isinstance(error, MCPError)
    assert error.error.message == "this token opens no run's tools"


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    return [
        leaf
        for each in group.exceptions
        for leaf in (_leaves(each) if isinstance(each, BaseExceptionGroup) else [each])
    ]


async def test_a_token_opens_its_own_run_only():
    mine, token = await mcp_run()
    other, _ = await mcp_run()
    async with lab_served() as base, httpx2.AsyncClient() as http:
        auth = {**ACCEPT, "Authorization": f"Bearer {token}"}
        elsewhere = await http.post(mcp_url(base, str(other.id)), json=INITIALIZE, headers=auth)
        own = await http.post(mcp_url(base, str(mine.id)), json=INITIALIZE, headers=auth)
        not_a_run = await http.post(f"{base}/mcp/runs/nothing/", json=INITIALIZE, headers=auth)
    assert elsewhere.status_code == 404
    assert elsewhere.json()["error"]["data"]["kind"] == "no_such_run"
    assert own.status_code == 200
    assert own.json()["result"]["serverInfo"]["name"] == "voice-reliability-lab"
    assert not_a_run.status_code == 404


async def test_an_ended_runs_token_is_refused_with_403():
    run, token = await mcp_run()
    async with lab_served() as base, httpx2.AsyncClient() as http:
        auth = {**ACCEPT, "Authorization": f"Bearer {token}"}
        before = await http.post(mcp_url(base, str(run.id)), json=INITIALIZE, headers=auth)
        await database_sync_to_async(store.run_mark_ended)(run=run)
        after = await http.post(mcp_url(base, str(run.id)), json=INITIALIZE, headers=auth)
    assert before.status_code == 200
    assert after.status_code == 403
    assert after.json()["error"]["message"] == "this run has ended; its tools are closed"


async def test_a_call_reaches_the_runs_toolbox_and_a_refusal_comes_back_as_an_error_result():
    run, token = await mcp_run()
    toolbox = RecordingToolBox(
        ToolResult("", "ok", {"options": [{"slot_id": "tue-0900", "time": "09:00"}]}),
        ToolResult("", "blocked", reason="the commit rests on revision 1, not the latest (2)"),
    )
    LIVE.open(str(run.id), toolbox)
    try:
        async with lab_served() as base, mcp_session(mcp_url(base, str(run.id)), token) as session:
            looked = await session.call_tool("check_availability", {"day": "tuesday"})
            booked = await session.call_tool(
                "book_appointment", {"slot_id": "tue-0900", "day": "tuesday", "time": "09:00"}
            )
    finally:
        LIVE.close(str(run.id), toolbox)
    assert [(c.call_id, c.name, c.arguments) for c in toolbox.calls] == [
        ("mcp-1", "check_availability", {"day": "tuesday"}),
        ("mcp-2", "book_appointment", {"slot_id": "tue-0900", "day": "tuesday", "time": "09:00"}),
    ]
    assert not looked.is_error
    assert looked.structured_content == {"options": [{"slot_id": "tue-0900", "time": "09:00"}]}
    assert booked.is_error
    assert text_of(booked) == "the commit rests on revision 1, not the latest (2)"
    assert booked.structured_content["outcome"] == "blocked"


async def test_a_call_for_a_tool_the_run_lacks_or_a_run_not_live_here_is_an_error_result():
    run, token = await mcp_run()
    scripted, scripted_token = await mcp_run(agent=None)
    async with lab_served() as base:
        async with mcp_session(mcp_url(base, str(run.id)), token) as session:
            not_live = await session.call_tool("check_availability", {"day": "tuesday"})
            lacking = await session.call_tool("issue_refund", {"order_number": "4512"})
        async with mcp_session(mcp_url(base, str(scripted.id)), scripted_token) as session:
            in_process = await session.call_tool("check_availability", {"day": "tuesday"})
    assert not_live.is_error
    assert "this run is not live in the lab" in text_of(not_live)
    assert in_process.is_error
    assert "the lab's own scripted agent" in text_of(in_process)
    assert lacking.is_error
    assert "offers no tool named 'issue_refund'" in text_of(lacking)
