"""Scaled out, an MCP call that lands on a process not driving its run is relayed over the
channel layer to the one that does. Two processes are stood in one here: each has its own
registry of live runs and its own relay, and they share the channel layer (the in-memory one,
or Redis under `make test-scaled`)."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer

from lab.connectors.interface import ToolResult
from lab.connectors.mcp_access import mcp_token_issue
from lab.connectors.mcp_relay import McpRelay
from lab.connectors.mcp_runs import McpRuns
from lab.connectors.mcp_server import mcp_server
from lab.connectors.registry import AgentSpec
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.web.mcp_http import McpEndpoint, McpMount
from tests.connectors.mcp_serving import lab_served, mcp_session, mcp_url, text_of
from tests.connectors.test_mcp_server import RecordingToolBox

pytestmark = pytest.mark.django_db(transaction=True)

RUN = "0d2e4c3a-1b5f-4e7a-9c8d-6f5e4d3c2b1a"
SLOTS = {"options": [{"slot_id": "thu-1400", "day": "thursday", "time": "14:00"}]}


class Processes:
    """Process A drives the run; process B holds nothing of it."""

    def __init__(self) -> None:
        layer = get_channel_layer()
        self.a_runs, self.b_runs = McpRuns(), McpRuns()
        self.a = McpRelay(self.a_runs, layer=layer, shared=True)
        self.b = McpRelay(self.b_runs, layer=layer, shared=True)

    async def aclose(self) -> None:
        await self.a.aclose()
        await self.b.aclose()


@pytest.fixture
async def processes():
    both = Processes()
    yield both
    await both.aclose()


async def test_a_call_landing_elsewhere_is_carried_out_by_the_driving_process(processes):
    toolbox = RecordingToolBox(ToolResult("", "ok", SLOTS))
    processes.a_runs.open(RUN, toolbox)
    await processes.a.join(RUN)
    answer = await processes.b.forward(RUN, "check_availability", {"day": "thursday"}, timeout_s=30)
    assert answer == ToolResult("mcp-1", "ok", SLOTS)
    assert [(c.call_id, c.name, c.arguments) for c in toolbox.calls] == [
        ("mcp-1", "check_availability", {"day": "thursday"})
    ]


async def test_a_process_that_let_the_run_go_stays_silent_and_leaves_the_group(processes):
    toolbox = RecordingToolBox()
    processes.a_runs.open(RUN, toolbox)
    await processes.a.join(RUN)
    processes.a_runs.close(RUN, toolbox)
    # Nobody holds the run: the asker is told nothing came, after its (short) wait.
    answer = await processes.b.forward(RUN, "check_availability", {"day": "monday"}, timeout_s=1)
    assert answer is None
    # A left the run's group when it found it no longer held the run: holding it again without
    # joining, it hears nothing more.
    processes.a_runs.open(RUN, toolbox)
    again = await processes.b.forward(RUN, "check_availability", {"day": "monday"}, timeout_s=1)
    assert again is None
    assert toolbox.calls == []


async def test_the_mcp_endpoint_of_a_process_not_driving_the_run_relays_its_calls(processes):
    run = await database_sync_to_async(run_start)(
        scenario_id="correction",
        mode=Mode.GUARDED,
        channel=Channel.TYPED,
        agent=AgentSpec(connector="pipecat", endpoint="ws://127.0.0.1:9/ws"),
    )
    token = await database_sync_to_async(mcp_token_issue)(run=run)
    toolbox = RecordingToolBox(ToolResult("", "blocked", reason="the readback was not confirmed"))
    processes.a_runs.open(str(run.id), toolbox)
    await processes.a.join(str(run.id))
    # Process B's endpoint: its own registry, empty, and its relay.
    endpoint = McpEndpoint(mcp_server(processes.b_runs, processes.b, relay_timeout_s=30))
    app = McpMount(_not_found, endpoint)
    async with lab_served(app, endpoint) as base, _session(base, str(run.id), token) as session:
        booked = await session.call_tool(
            "book_appointment", {"slot_id": "thu-1400", "day": "thursday", "time": "14:00"}
        )
    assert booked.is_error
    assert text_of(booked) == "the readback was not confirmed"
    assert [c.name for c in toolbox.calls] == ["book_appointment"]


def _session(base: str, run_id: str, token: str):
    return mcp_session(mcp_url(base, run_id), token)


async def _not_found(scope, receive, send) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})
