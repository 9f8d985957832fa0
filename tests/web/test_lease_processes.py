"""One driver per run across processes: two socket apps that share nothing but the database
(and the channel layer, as Redis would be shared) fight for the lease."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events import store
from lab.events.chain import GENESIS_HASH, digest, event_body
from lab.events.models import Run
from lab.events.types import Channel, Event, Mode
from lab.runs.services import run_start
from lab.scenarios.catalog import contract_get
from lab.web import live
from lab.web.live import LiveRegistry
from lab.web.routing import run_socket_routes
from tests.web.owners import owner_cookie

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = [(b"origin", b"http://127.0.0.1")]
WAIT_S = 60


class Process:
    """What one server process holds: its own live runs, no memory shared with another."""

    def __init__(self) -> None:
        self.registry = LiveRegistry()
        self.app = URLRouter(run_socket_routes(self.registry))

    async def open(self, run: Run) -> WebsocketCommunicator:
        communicator = WebsocketCommunicator(
            self.app, f"/ws/runs/{run.id}/", headers=[*ORIGIN, await owner_cookie()]
        )
        connected, _ = await communicator.connect(timeout=WAIT_S)
        assert connected
        return communicator


async def drain_until(communicator: WebsocketCommunicator, needle: str) -> str:
    while True:
        message = await communicator.receive_from(timeout=WAIT_S)
        if needle in message:
            return message


async def say(communicator: WebsocketCommunicator, text: str) -> None:
    await communicator.send_to(text_data=json.dumps({"action": "say", "text": text}))


def assert_one_chain(events: list[Event]) -> None:
    previous = GENESIS_HASH
    for seq, event in enumerate(events, start=1):
        assert (event.seq, event.prev_hash) == (seq, previous)
        assert event.hash == digest(event_body(event))
        previous = event.hash


@pytest.fixture
def quick_takeover(monkeypatch, settings):
    """A waiting window looks for a lapsed lease often; the grace period never expires here."""
    monkeypatch.setattr(live, "TAKEOVER_POLL_S", 0.05)
    settings.LAB_RECONNECT_GRACE_S = WAIT_S


def lapse_the_lease(run: Run) -> None:
    """Let the lease's time run out, as it does once nobody renews it."""
    Run.objects.filter(pk=run.pk).update(driver_expires_at=timezone.now() - timedelta(seconds=1))


async def test_another_process_watches_then_takes_over_and_the_stale_one_is_fenced(
    fast_clock, quick_takeover
):
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    one, two = Process(), Process()
    first = await one.open(run)
    assert 'data-role="driver"' in await first.receive_from(timeout=WAIT_S)
    second = await two.open(run)
    assert "Watching: another window drives this run" in await second.receive_from(timeout=WAIT_S)

    await drain_until(first, 'data-speaking="false"')
    await say(first, "I'd like an appointment on Tuesday morning.")
    await drain_until(first, "Shall I book it?")
    await drain_until(first, 'data-speaking="false"')
    await say(first, "Actually, make that Friday afternoon.")
    await drain_until(second, "Friday at 2:30 PM")  # live, through the run's group
    await say(second, "Yes, book it.")
    await drain_until(second, "Not accepted")

    # The first window drops; its session lingers in the grace period, no longer renewing.
    stale = one.registry.runs[str(run.id)]
    await first.disconnect(timeout=WAIT_S)
    await database_sync_to_async(lapse_the_lease)(run)
    # The waiting window rebuilds the session from the stored log and drives it.
    await drain_until(second, 'data-role="driver"')
    assert str(run.id) in two.registry.runs

    # The stale session wakes up and tries to write: fenced, and it lets the run go.
    await stale.guard(stale.session.caller_says("Yes, book it.", source="typed"))
    assert stale.disposed and str(run.id) not in one.registry.runs

    await say(second, "Yes, book it.")
    await drain_until(second, "Your reference is")
    await second.send_to(text_data=json.dumps({"action": "end"}))
    await drain_until(second, 'data-final="true"')
    await second.disconnect(timeout=WAIT_S)

    events = await database_sync_to_async(store.run_events)(run)
    assert_one_chain(events)
    said = [e.payload.text for e in events if e.type == "caller.utterance"]
    assert said == [
        "I'd like an appointment on Tuesday morning.",
        "Actually, make that Friday afternoon.",
        "Yes, book it.",
    ]
    receipts = [e.payload.receipt for e in events if e.type == "tool.commit.succeeded"]
    assert [r.args["slot_id"] for r in receipts] == ["fri-1430"]
    assert evaluate(contract_get("correction"), events).verdict is Verdict.PASS


async def test_two_processes_opening_a_fresh_run_at_once_start_it_once(fast_clock):
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED
    )
    one, two = Process(), Process()
    pages = await asyncio.gather(one.open(run), two.open(run))
    firsts = [await page.receive_from(timeout=WAIT_S) for page in pages]
    assert sorted('data-role="driver"' in first for first in firsts) == [False, True]
    driver = pages[0] if 'data-role="driver"' in firsts[0] else pages[1]
    await drain_until(driver, 'data-speaking="false"')
    for page in pages:
        await page.disconnect(timeout=WAIT_S)
    events = await database_sync_to_async(store.run_events)(run)
    assert [e.type for e in events].count("run.started") == 1
    assert_one_chain(events)
