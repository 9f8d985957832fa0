"""The run socket under people: strangers, share links, second windows, reloads and leaving."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from lab.asgi import application
from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Event, Mode
from lab.runs.ownership import owner_token_new, share_link_create
from lab.runs.services import run_start
from lab.web.live import REGISTRY
from tests.web.owners import owner_cookie

pytestmark = pytest.mark.django_db(transaction=True)

ORIGIN = [(b"origin", b"http://127.0.0.1")]
WAIT_S = 60


@pytest.fixture(autouse=True)
async def live_runs_let_go():
    """A run still in its grace period writes on its own: let it go before the database is
    flushed, or the flush meets its write (a locked table)."""
    before = set(REGISTRY.runs)
    yield
    # Only this test's runs: another module's may be left from a loop that is closed now.
    for run_id, live in list(REGISTRY.runs.items()):
        if run_id not in before:
            await live.dispose()


async def new_run(scenario_id: str = "correction") -> Run:
    return await database_sync_to_async(run_start)(
        scenario_id=scenario_id, mode=Mode.GUARDED, channel=Channel.TYPED
    )


async def open_socket(path: str, *cookies: tuple[bytes, bytes]) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(application, path, headers=[*ORIGIN, *cookies])
    connected, _ = await communicator.connect(timeout=WAIT_S)
    assert connected
    return communicator


async def drive(run: Run) -> WebsocketCommunicator:
    communicator = await open_socket(f"/ws/runs/{run.id}/", await owner_cookie())
    assert 'data-role="driver"' in await communicator.receive_from(timeout=WAIT_S)
    return communicator


async def drain_until(communicator: WebsocketCommunicator, needle: str) -> str:
    while True:
        message = await communicator.receive_from(timeout=WAIT_S)
        if needle in message:
            return message


async def say(communicator: WebsocketCommunicator, text: str) -> None:
    await communicator.send_to(text_data=json.dumps({"action": "say", "text": text}))


async def stored(run: Run) -> list[Event]:
    return await database_sync_to_async(store.run_events)(run)


async def poll(check) -> None:
    """Until check() holds: another task (the grace timer) writes what it reads."""
    async with asyncio.timeout(WAIT_S):
        while not await check():  # noqa: ASYNC110 - the writer is in another task, not ours
            await asyncio.sleep(0.05)


async def test_a_stranger_socket_is_told_not_found_and_cannot_start_the_run(fast_clock):
    run = await new_run()
    for cookies in [(), (await owner_cookie(owner_token_new()),)]:
        stranger = await open_socket(f"/ws/runs/{run.id}/", *cookies)
        assert "There is no run with this id." in await stranger.receive_from(timeout=WAIT_S)
        assert await stranger.receive_output(timeout=WAIT_S) == {
            "type": "websocket.close",
            "code": 4404,
        }
        await stranger.disconnect()
    # The stranger neither started the run nor took it: its owner drives it from the start.
    assert await stored(run) == []
    owner = await drive(run)
    await drain_until(owner, 'data-speaking="false"')
    await owner.disconnect(timeout=WAIT_S)
    assert (await stored(run))[0].type == "run.started"


async def test_a_share_link_socket_watches_live_and_cannot_drive(fast_clock):
    run = await new_run()
    owner = await drive(run)
    token = await database_sync_to_async(share_link_create)(run=run)
    viewer = await open_socket(f"/ws/share/{token}/")
    first = await viewer.receive_from(timeout=WAIT_S)
    assert 'data-role="shared"' in first and "read-only share link" in first
    await drain_until(owner, 'data-speaking="false"')
    await say(owner, "I'd like an appointment on Tuesday morning.")
    # The owner's line reaches the viewer through the run's channel-layer group.
    await drain_until(viewer, "Tuesday morning")
    await say(viewer, "Actually, make that Friday afternoon.")
    assert "this window is watching" in await drain_until(viewer, "Not accepted")
    await owner.disconnect(timeout=WAIT_S)
    await viewer.disconnect()
    said = [e.payload.text for e in await stored(run) if e.type == "caller.utterance"]
    assert said == ["I'd like an appointment on Tuesday morning."]


async def test_a_second_window_watches_then_drives_once_the_first_is_gone(fast_clock, settings):
    settings.LAB_RECONNECT_GRACE_S = WAIT_S
    run = await new_run()
    first = await drive(run)
    second = await open_socket(f"/ws/runs/{run.id}/", await owner_cookie())
    shown = await second.receive_from(timeout=WAIT_S)
    assert "Watching: another window drives this run" in shown
    assert '<fieldset class="drive" disabled>' in shown
    await drain_until(first, 'data-speaking="false"')
    await say(first, "I'd like an appointment on Tuesday morning.")
    await drain_until(second, "Tuesday morning")
    await say(second, "Hello from the other window.")
    await drain_until(second, "Not accepted")
    await first.disconnect(timeout=WAIT_S)
    # The watching window takes over at once, on the same live session.
    await drain_until(second, 'data-role="driver"')
    await say(second, "Actually, make that Friday afternoon.")
    await drain_until(second, "Friday at 2:30 PM")
    await second.disconnect(timeout=WAIT_S)
    events = await stored(run)
    said = [e.payload.text for e in events if e.type == "caller.utterance"]
    assert said == [
        "I'd like an appointment on Tuesday morning.",
        "Actually, make that Friday afternoon.",
    ]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_a_reload_within_the_grace_period_resumes_the_same_run(fast_clock, settings):
    settings.LAB_RECONNECT_GRACE_S = WAIT_S
    run = await new_run()
    page = await drive(run)
    await drain_until(page, 'data-speaking="false"')
    await say(page, "I'd like an appointment on Tuesday morning.")
    await drain_until(page, "Shall I book it?")
    await page.disconnect(timeout=WAIT_S)
    assert (await stored(run))[-1].type != "run.ended"

    reloaded = await open_socket(f"/ws/runs/{run.id}/", await owner_cookie())
    synced = await reloaded.receive_from(timeout=WAIT_S)
    assert 'data-role="driver"' in synced
    assert "Tuesday morning" in synced and "(run in progress)" in synced
    await drain_until(reloaded, 'data-speaking="false"')
    await say(reloaded, "Yes, book it.")
    await drain_until(reloaded, "Your reference is")
    await reloaded.send_to(text_data=json.dumps({"action": "end"}))
    await drain_until(reloaded, 'data-final="true"')
    await reloaded.disconnect(timeout=WAIT_S)
    events = await stored(run)
    assert [e.type for e in events].count("run.started") == 1
    assert events[-1].payload.reason_kind == "completed"
    assert sum(e.type == "tool.commit.succeeded" for e in events) == 1


async def test_a_caller_gone_past_the_grace_period_has_left_and_every_page_says_ended(
    fast_clock, settings
):
    settings.LAB_RECONNECT_GRACE_S = 0.2
    run = await new_run()
    page = await drive(run)
    await drain_until(page, 'data-speaking="false"')
    await page.disconnect(timeout=WAIT_S)
    status = database_sync_to_async(lambda: Run.objects.get(pk=run.pk).status)

    async def ended() -> bool:
        return await status() == Run.Status.ENDED

    await poll(ended)
    events = await stored(run)
    assert events[-1].type == "run.ended"
    assert events[-1].payload.reason_kind == "caller_left"
    late = await open_socket(f"/ws/runs/{run.id}/", await owner_cookie())
    shown = await late.receive_from(timeout=WAIT_S)
    assert "This run has ended." in shown and 'data-final="true"' in shown
    assert "run in progress" not in shown and 'id="say-form"' not in shown
    assert (await late.receive_output(timeout=WAIT_S))["code"] == 4410
    await late.disconnect()


async def test_when_the_run_ends_every_open_page_shows_the_same_ended_state(fast_clock):
    run = await new_run()
    owner = await drive(run)
    token = await database_sync_to_async(share_link_create)(run=run)
    viewer = await open_socket(f"/ws/share/{token}/")
    await viewer.receive_from(timeout=WAIT_S)
    await drain_until(owner, 'data-speaking="false"')
    await owner.send_to(text_data=json.dumps({"action": "end"}))
    for page in (owner, viewer):
        final = await drain_until(page, 'data-final="true"')
        assert 'data-role="ended"' in final and "This run has ended." in final
        assert "run in progress" not in final
    await owner.disconnect(timeout=WAIT_S)
    await viewer.disconnect()
