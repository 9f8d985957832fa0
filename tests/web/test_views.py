from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from tests.web.owners import act_as_owner

pytestmark = pytest.mark.django_db


def test_the_picker_lists_every_scenario_with_a_start_form(client):
    page = client.get("/").content.decode()
    for scenario_id in [
        "correction",
        "no_confirmation",
        "tool_timeout",
        "interruption",
        "double_confirmation",
        "refund_correction",
        "lossy_correction",
        "noisy_confirmation",
    ]:
        assert f'id="scenario-{scenario_id}"' in page
    assert "unguarded" in page


def test_starting_a_run_redirects_to_its_page(client):
    response = client.post("/runs/", {"scenario": "interruption", "channel": "typed"})
    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run.id}/"
    assert (run.mode, run.channel) == ("guarded", "typed")


def test_the_unguarded_switch_is_recorded_on_the_run(client):
    client.post("/runs/", {"scenario": "correction", "channel": "typed", "unguarded": "on"})
    assert Run.objects.get().mode == "unguarded"


def test_an_unknown_scenario_is_a_clear_400_not_a_crash(client):
    response = client.post("/runs/", {"scenario": "teleport", "channel": "typed"})
    assert response.status_code == 400
    assert "Unknown scenario &#x27;teleport&#x27;" in response.content.decode()
    assert Run.objects.count() == 0


def test_a_bad_channel_is_a_clear_400(client):
    response = client.post("/runs/", {"scenario": "correction", "channel": "fax"})
    assert response.status_code == 400
    assert "channel" in response.content.decode()


def test_the_run_page_shows_instructions_and_the_unguarded_label(client):
    run = run_start(scenario_id="correction", mode=Mode.UNGUARDED, channel=Channel.TYPED)
    act_as_owner(client)
    page = client.get(f"/runs/{run.id}/").content.decode()
    assert "Thursday afternoon" in page
    assert "Unguarded mode" in page
    assert f'ws-connect="/ws/runs/{run.id}/"' in page


def test_a_missing_run_is_a_404(client):
    assert client.get("/runs/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_the_scenario_contract_is_served_with_its_hash(client):
    body = client.get("/scenarios/tool_timeout.json").json()
    assert body["contract"]["faults"][0]["kind"] == "timeout"
    assert len(body["contract_hash"]) == 64
    assert client.get("/scenarios/nope.json").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_runscenarios_prints_verdicts_and_writes_event_logs(tmp_path, capsys, fast_clock):
    call_command("runscenarios", "--scenario", "double_confirmation", "--out", str(tmp_path))
    assert capsys.readouterr().out.strip() == "double_confirmation PASS"
    written = json.loads((tmp_path / "double_confirmation.json").read_text())
    types = [event["payload"]["type"] for event in written["events"]]
    assert types[0] == "run.started" and types[-1] == "run.ended"
    assert written["evaluation"]["verdict"] == "PASS"


@pytest.mark.django_db(transaction=True)
def test_runscenarios_exits_non_zero_when_a_run_fails(capsys, fast_clock):
    with pytest.raises(SystemExit) as exit_info:
        call_command("runscenarios", "--scenario", "no_confirmation", "--unguarded")
    assert exit_info.value.code == 1
    assert capsys.readouterr().out.strip() == "no_confirmation FAIL"


def test_runscenarios_names_an_unknown_scenario():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="unknown scenario 'nope'"):
        call_command("runscenarios", "--scenario", "nope")


def test_a_head_request_to_a_page_is_answered_like_its_get(client):
    head = client.head("/")
    assert head.status_code == 200
    assert head.content == b""


def test_the_site_has_an_icon_where_browsers_look_for_it(client):
    moved = client.get("/favicon.ico")
    assert moved.status_code == 301 and moved["Location"].endswith("/static/favicon.svg")
    assert 'rel="icon"' in client.get("/").content.decode()
