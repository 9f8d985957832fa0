"""A flood of input from one socket: rejections are counted, sampled into the log, then closed."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from lab.asgi import application
from lab.events import store
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.web import limits
from lab.web.consumers import CLOSE_POLICY
from lab.web.limits import InputBudget
from tests.web.owners import owner_cookie

ORIGIN = [(b"origin", b"http://127.0.0.1")]
WAIT_S = 60


def test_the_budget_reports_the_first_few_then_one_in_n_and_closes_at_the_limit():
    budget = InputBudget()
    verdicts = [budget.reject() for _ in range(limits.LIMIT)]
    reported = [v.count for v in verdicts if v.report]
    assert reported[: limits.REPORT_FIRST] == list(range(1, limits.REPORT_FIRST + 1))
    assert reported[limits.REPORT_FIRST :] == list(
        range(limits.REPORT_EVERY, limits.LIMIT + 1, limits.REPORT_EVERY)
    )
    assert [v.count for v in verdicts if v.close] == [limits.LIMIT]


def test_valid_messages_get_a_burst_then_a_steady_pace():
    budget = InputBudget()
    burst = [budget.message(0.0) for _ in range(limits.MESSAGE_BURST + 5)]
    assert burst.count(True) == limits.MESSAGE_BURST
    assert budget.message(1.0 / limits.MESSAGES_PER_S)  # one more has refilled
    assert not budget.message(1.0 / limits.MESSAGES_PER_S)


async def _open(run):
    communicator = WebsocketCommunicator(
        application, f"/ws/runs/{run.id}/", headers=[*ORIGIN, await owner_cookie()]
    )
    connected, _ = await communicator.connect(timeout=WAIT_S)
    assert connected
    return communicator


async def _until_closed(communicator) -> int:
    async with asyncio.timeout(WAIT_S):
        while True:
            message = await communicator.receive_output(timeout=WAIT_S)
            if message["type"] == "websocket.close":
                return message["code"]


@pytest.mark.django_db(transaction=True)
async def test_a_thousand_invalid_text_messages_are_sampled_then_the_socket_is_closed(fast_clock):
    run = await database_sync_to_async(run_start)(
        scenario_id="no_confirmation", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    communicator = await _open(run)
    for _ in range(1000):
        await communicator.send_to(text_data="{not json")
    assert await _until_closed(communicator) == CLOSE_POLICY
    await communicator.disconnect(timeout=WAIT_S)
    events = await database_sync_to_async(store.run_events)(run)
    rejected = [e.payload for e in events if e.type == "input.rejected"]
    expected = limits.REPORT_FIRST + limits.LIMIT // limits.REPORT_EVERY
    assert len(rejected) == expected, [r.reason for r in rejected]
    assert f"({limits.LIMIT} rejected so far)" in rejected[-1].reason
    assert events[-1].type == "run.ended"


@pytest.mark.django_db(transaction=True)
async def test_a_flood_of_valid_lines_is_paced_and_then_closed(fast_clock):
    run = await database_sync_to_async(run_start)(
        scenario_id="no_confirmation", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    communicator = await _open(run)
    loop = asyncio.get_running_loop()
    started = loop.time()
    line = json.dumps({"action": "say", "text": "Hello?"})
    for _ in range(limits.MESSAGE_BURST + limits.LIMIT + 50):
        await communicator.send_to(text_data=line)
    assert await _until_closed(communicator) == CLOSE_POLICY
    elapsed = loop.time() - started
    await communicator.disconnect(timeout=WAIT_S)
    events = await database_sync_to_async(store.run_events)(run)
    heard = sum(e.type == "caller.utterance" for e in events)
    assert heard <= limits.MESSAGE_BURST + elapsed * limits.MESSAGES_PER_S + 1
    rejected = [e.payload for e in events if e.type == "input.rejected"]
    assert rejected and all(r.reason_kind == "rate_limited" for r in rejected)
    assert len(rejected) <= limits.REPORT_FIRST + limits.LIMIT // limits.REPORT_EVERY
