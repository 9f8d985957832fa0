"""A run belongs to the browser session that started it; others see it only by share link."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from lab.events.models import Run

pytestmark = pytest.mark.django_db


def start_run(client: Client, scenario: str = "correction") -> Run:
    response = client.post("/runs/", {"scenario": scenario, "channel": "typed"})
    assert response.status_code == 302
    return Run.objects.get(pk=response["Location"].split("/")[2])


def run_urls(run: Run) -> list[str]:
    return [f"/runs/{run.id}/", f"/runs/{run.id}/events.json", f"/runs/{run.id}/report.json"]


def share(client: Client, run: Run) -> str:
    page = client.post(f"/runs/{run.id}/share/").content.decode()
    found = re.search(r'id="share-url"[^>]*>http://testserver(/share/[\w-]+/)<', page)
    assert found, "the owner's page shows no share link"
    return found.group(1)


def test_a_run_is_404_to_a_browser_that_did_not_start_it(client):
    run = start_run(client)
    assert client.get(f"/runs/{run.id}/").status_code == 200
    for stranger in (Client(), _with_a_run_of_its_own()):
        for url in run_urls(run):
            response = stranger.get(url)
            # 404, not 403: a stranger cannot even learn that the run exists.
            assert response.status_code == 404, url
            assert str(run.id) not in response.content.decode()


def _with_a_run_of_its_own() -> Client:
    other = Client()
    start_run(other, "interruption")
    return other


def test_the_picker_lists_only_the_runs_of_this_browser(client):
    mine = start_run(client)
    other = Client()
    theirs = start_run(other, "interruption")
    page = client.get("/").content.decode()
    assert f"/runs/{mine.id}/" in page
    assert f"/runs/{theirs.id}/" not in page
    assert str(theirs.id) not in Client().get("/").content.decode()


def test_the_owner_token_lives_in_the_session_and_only_its_digest_on_the_run(client):
    run = start_run(client)
    token = client.session["lab.owner"]
    assert len(token) >= 40
    assert token not in run.owner_hash and len(run.owner_hash) == 64


def test_a_share_link_opens_the_page_log_and_report_read_only(client):
    run = start_run(client)
    link = share(client, run)
    viewer = Client()
    page = viewer.get(link).content.decode()
    assert f'ws-connect="/ws/share/{link.split("/")[2]}/"' in page
    assert "Watching: a read-only share link" in page
    assert 'id="say-form"' not in page and 'id="share"' not in page
    assert viewer.get(f"{link}events.json").json()["run_id"] == str(run.id)
    # The report needs a started run; the point here is that the link reaches the view.
    assert viewer.get(f"{link}report.json").status_code in (200, 409)
    assert viewer.get(f"/runs/{run.id}/").status_code == 404
    assert viewer.post(f"/runs/{run.id}/share/").status_code == 404


def test_a_new_share_link_revokes_the_old_one_and_tokens_are_stored_hashed(client):
    run = start_run(client)
    first = share(client, run)
    second = share(client, run)
    assert Client().get(first).status_code == 404
    assert Client().get(second).status_code == 200
    run.refresh_from_db()
    assert second.split("/")[2] not in (run.share_hash or "")


def test_a_guessed_share_token_is_a_404(client):
    start_run(client)
    assert Client().get("/share/" + "A" * 43 + "/").status_code == 404
    assert Client().get("/share/x/events.json").status_code == 404


def test_the_share_form_answers_htmx_with_just_the_link(client):
    run = start_run(client)
    response = client.post(f"/runs/{run.id}/share/", headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="share"') and "/share/" in body


def test_run_pages_and_live_json_are_never_cached(client):
    run = start_run(client)
    link = share(client, run)
    for url in [f"/runs/{run.id}/", f"/runs/{run.id}/events.json", link, f"{link}events.json"]:
        assert "no-store" in client.get(url)["Cache-Control"], url


def test_the_run_page_shows_no_live_controls_until_the_socket_says_who_drives(client):
    run = start_run(client)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert 'data-role="connecting"' in page
    assert re.search(r'<fieldset class="drive" disabled>\s*<form id="say-form"', page)
