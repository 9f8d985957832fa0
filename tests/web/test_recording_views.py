"""A run's recording is served as the run is: to its owner and its share link, 404 to others."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from lab.events import store
from lab.events.types import Channel, Mode
from lab.reports.export import report_bytes
from lab.reports.models import ImportedReport
from lab.reports.services import report_for_run
from lab.runs.ownership import owner_token_new, share_link_create
from lab.runs.recording_files import recording_append, recording_path
from lab.runs.services import run_start
from tests.web.owners import act_as_owner
from tests.web.test_waterfall import finished_voice_run  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def recorded():
    run = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.VOICE)
    pcm = np.arange(3200, dtype="<i2").tobytes()
    recording_append(run_id=str(run.id), start_byte=0, data=pcm, max_file_bytes=10**6)
    return run


def test_the_owner_downloads_the_wav_never_cached(client: Client, recorded):
    act_as_owner(client)
    response = client.get(reverse("run_recording_wav", args=[recorded.id]))
    body = b"".join(response.streaming_content)
    response.close()
    assert response.status_code == 200 and response["Content-Type"] == "audio/wav"
    cache = response["Cache-Control"]
    assert "private" in cache and "no-store" in cache
    assert body == recording_path(str(recorded.id)).read_bytes()
    assert body[:4] == b"RIFF" and len(body) == 44 + 3200 * 2
    assert hashlib.sha256(body).hexdigest()  # what recording.closed would name


def test_another_visitors_session_and_no_session_get_the_runs_404(client: Client, recorded):
    url = reverse("run_recording_wav", args=[recorded.id])
    assert client.get(url).status_code == 404
    act_as_owner(client, owner_token_new())
    assert client.get(url).status_code == 404


def test_a_share_link_plays_the_recording(client: Client, recorded):
    token = share_link_create(run=recorded)
    response = client.get(reverse("shared_recording_wav", args=[token]))
    assert response.status_code == 200 and response["Content-Type"] == "audio/wav"
    assert b"".join(response.streaming_content)[:4] == b"RIFF"
    response.close()
    assert client.get(reverse("shared_recording_wav", args=["not-a-token"])).status_code == 404


def test_a_byte_range_is_served_for_seeking_and_a_range_past_the_end_refused(
    client: Client, recorded
):
    act_as_owner(client)
    url = reverse("run_recording_wav", args=[recorded.id])
    part = client.get(url, headers={"Range": "bytes=0-43"})
    assert part.status_code == 206 and part.content[:4] == b"RIFF" and len(part.content) == 44
    assert part["Content-Range"] == f"bytes 0-43/{44 + 6400}"
    assert client.get(url, headers={"Range": "bytes=99999-"}).status_code == 416


def test_a_run_without_a_recording_is_a_404_not_an_error(client: Client):
    run = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED)
    act_as_owner(client)
    response = client.get(reverse("run_recording_wav", args=[run.id]))
    assert response.status_code == 404


def test_the_run_page_offers_the_player_and_the_download_once_the_run_has_ended(
    client: Client, recorded
):
    act_as_owner(client)
    live = client.get(reverse("run_page", args=[recorded.id])).content.decode()
    assert '<audio id="recording"' not in live  # its file is still growing
    store.run_mark_ended(run=recorded)
    page = client.get(reverse("run_page", args=[recorded.id])).content.decode()
    assert '<audio id="recording"' in page and "js/playhead.js" in page
    assert reverse("run_recording_wav", args=[recorded.id]) in page
    assert "data-event-clock=" in page


def test_the_replay_plays_the_labs_copy_only_for_whoever_may_see_the_run(
    client: Client,
    finished_voice_run,  # noqa: F811 (the fixture)
):
    run_id = str(finished_voice_run.id)
    recording_append(run_id=run_id, start_byte=0, data=bytes(64), max_file_bytes=10**6)
    raw = report_bytes(report_for_run(finished_voice_run))
    upload = {"report": SimpleUploadedFile("voice.json", raw, content_type="application/json")}
    assert client.post(reverse("report_create"), upload).status_code == 200
    replay = reverse("report_replay", args=[ImportedReport.objects.get().id])
    url = reverse("run_recording_wav", args=[run_id])
    assert url in client.get(replay).content.decode()
    stranger = Client()
    assert url not in stranger.get(replay).content.decode()
