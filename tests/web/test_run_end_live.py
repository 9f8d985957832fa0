"""The live run page shows what a reload would, without one: the referee line as the caller's
turns are judged, and at the end the sealed recording (at the window's own URL) and, on the
owner's page, no MCP button."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from lab.asgi import application
from lab.connectors.registry import AgentSpec, register_connector, unregister_connector
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.web.run_end import run_end_fragment
from tests.connectors.outsiders import Habit, Outsider
from tests.web.owners import owner_cookie

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def outsiders() -> Iterator[None]:
    def connect(spec: AgentSpec) -> Outsider:
        assert spec.endpoint in get_args(Habit)
        return Outsider(spec.endpoint)  # type: ignore[arg-type]

    register_connector("double", connect)
    yield
    unregister_connector("double")


async def test_the_driving_window_shows_the_referee_live_and_loses_the_mcp_button_at_the_end(
    outsiders: None, fast_clock: object
) -> None:
    agent = AgentSpec(connector="double", endpoint="well_behaved", model="m1")
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED, agent=agent
    )
    headers = [(b"origin", b"http://127.0.0.1"), await owner_cookie()]
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.id}/", headers=headers)
    connected, _ = await communicator.connect(timeout=60)
    assert connected
    try:
        await communicator.send_to(text_data=json.dumps({"action": "play"}))
        referee, seen_final = "", False
        while True:
            message = await communicator.receive_from(timeout=60)
            if 'id="referee" hx-swap-oob="true"' in message:
                referee = message
            seen_final = seen_final or 'data-final="true"' in message
            if seen_final and 'id="mcp"' in message:
                break
    finally:
        await communicator.disconnect()
    # The referee line fills in as the caller's turns are judged, before the end.
    assert "Referee: scenario annotations" in referee
    assert '<div id="mcp" class="share" hx-swap-oob="true" hidden></div>' in message


@pytest.mark.parametrize(("share", "owner"), [("", True), ("tok3n", False)])
def test_the_recording_arrives_at_the_windows_own_url(
    settings: object, tmp_path: Path, share: str, owner: bool
) -> None:
    settings.LAB_RECORDING_DIR = tmp_path  # type: ignore[attr-defined]
    run = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.VOICE)
    (tmp_path / f"{run.id}.wav").write_bytes(b"RIFF")
    html = run_end_fragment(run=run, events=[], owner=owner, share=share)
    url = f"/share/{share}/recording.wav" if share else f"/runs/{run.id}/recording.wav"
    assert 'id="recording-box" data-event-clock="{}" hx-swap-oob="true">' in html
    assert f'src="{url}"' in html and f'href="{url}" download' in html
    # No MCP button on this run (the scripted agent) and none on a share link's page.
    assert 'id="mcp"' not in html


def test_a_typed_run_gets_no_recording_and_only_its_owner_loses_the_mcp_button(
    settings: object, tmp_path: Path
) -> None:
    settings.LAB_RECORDING_DIR = tmp_path  # type: ignore[attr-defined]
    run = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED)
    run.agent_connector = "openai"
    owners = run_end_fragment(run=run, events=[], owner=True)
    assert "recording-box" not in owners and 'id="mcp"' in owners
    assert 'id="mcp"' not in run_end_fragment(run=run, events=[], owner=False, share="t")
