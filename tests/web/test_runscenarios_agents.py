from __future__ import annotations

import json
from collections.abc import Iterator
from typing import get_args

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from lab.connectors.registry import AgentSpec, register_connector, unregister_connector
from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from tests.connectors.outsiders import Habit, Outsider


@pytest.fixture
def outsiders() -> Iterator[None]:
    """A connector whose endpoint names the outside agent's habit: double:keeps_first_offer."""

    def connect(spec: AgentSpec) -> Outsider:
        assert spec.endpoint in get_args(Habit)
        return Outsider(spec.endpoint)  # type: ignore[arg-type]

    register_connector("double", connect)
    yield
    unregister_connector("double")


@pytest.mark.django_db(transaction=True)
def test_two_trials_of_a_well_behaved_agent_print_pass_k_and_keep_each_report(
    outsiders, tmp_path, capsys, fast_clock
):
    call_command(
        "runscenarios",
        "--agent",
        "double:well_behaved",
        "--model",
        "m1",
        "--scenario",
        "correction",
        "--trials",
        "2",
        "--out",
        str(tmp_path),
    )
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("correction pass^2=yes pass_rate=2/2 (100%, 95% CI [34%, 100%])")
    assert lines[1].startswith("pass^2: 1/1 scenarios; 2/2 trials passed; verdicts flipped on 0/1")
    assert "agent double" in lines[1]
    for trial in (1, 2):
        report = json.loads((tmp_path / f"correction.trial{trial}.json").read_text())
        started = report["events"][0]["payload"]
        assert started["agent"]["endpoint"] == "test://outsider"
        assert report["evaluation"]["verdict"] == "PASS"
    runs = Run.objects.all()
    assert {(r.agent_connector, r.agent_endpoint, r.agent_model) for r in runs} == {
        ("double", "well_behaved", "m1")
    }


@pytest.mark.django_db(transaction=True)
def test_trials_exit_non_zero_when_a_scenario_fails_any_trial(outsiders, capsys, fast_clock):
    with pytest.raises(SystemExit) as exit_info:
        call_command(
            "runscenarios",
            "--agent",
            "double:keeps_first_offer",
            "--as-is",
            "--scenario",
            "correction",
            "--trials",
            "2",
        )
    assert exit_info.value.code == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].startswith("correction pass^2=no pass_rate=0/2")
    assert "trial 1: FAIL Contradicted: old_proposal_expired" in captured.err
    assert Run.objects.filter(mode="unguarded").count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_agents_trials_say_which_differences_are_beyond_noise(outsiders, capsys, fast_clock):
    with pytest.raises(SystemExit):
        call_command(
            "runscenarios",
            "--agent",
            "double:well_behaved",
            "--versus",
            "double:keeps_first_offer",
            "--as-is",
            "--scenario",
            "correction",
            "--scenario",
            "double_confirmation",
            "--trials",
            "4",
        )
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "correction pass^4=yes pass_rate=4/4 (100%, 95% CI [51%, 100%]) flip_rate=0.00"
    )
    assert "correction pass^4=no pass_rate=0/4 (0%, 95% CI [0%, 49%]) flip_rate=0.00" in out
    assert any(
        line.startswith("correction A=4/4 B=0/4 first_better (A better): beyond noise")
        for line in out
    )
    # The test double books a second yes again whatever its habit: both fail alike.
    assert any(line.startswith("double_confirmation A=0/4 B=0/4 within_noise") for line in out)
    assert out[-1] == "beyond noise on 1/2 scenarios"


@pytest.mark.django_db(transaction=True)
def test_a_baseline_runs_the_same_agent_twice_and_finds_no_difference(
    outsiders, capsys, fast_clock
):
    call_command(
        "runscenarios",
        "--agent",
        "double:well_behaved",
        "--baseline",
        "--scenario",
        "correction",
        "--trials",
        "2",
    )
    out = capsys.readouterr().out.splitlines()
    assert out[-3].startswith("baseline (A/A): the same agent twice: A = double well_behaved")
    assert out[-2].startswith("correction A=2/2 B=2/2 within_noise: within noise")
    assert Run.objects.count() == 4


@pytest.mark.django_db
def test_an_unknown_connector_is_refused_before_any_run():
    with pytest.raises(CommandError, match="unknown agent connector 'nope'"):
        call_command("runscenarios", "--agent", "nope:http://127.0.0.1:9/v1")
    with pytest.raises(CommandError, match="neither 'scripted' nor CONNECTOR:ENDPOINT"):
        call_command("runscenarios", "--agent", "openai")
    with pytest.raises(CommandError, match="--trials must lie in"):
        call_command("runscenarios", "--trials", "0")
    with pytest.raises(CommandError, match="give --trials K"):
        call_command("runscenarios", "--baseline")
    assert not Run.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_verifyreport_names_the_outside_agent_of_a_report(outsiders, tmp_path, capsys, fast_clock):
    call_command(
        "runscenarios",
        "--agent",
        "double:well_behaved",
        "--scenario",
        "correction",
        "--out",
        str(tmp_path),
    )
    assert capsys.readouterr().out.strip() == "correction PASS"
    call_command("verifyreport", str(tmp_path / "correction.json"))
    out = capsys.readouterr().out
    assert "  Agent under test: openai test://outsider (model well_behaved)" in out
    assert "  Referee: scenario annotations" in out
    assert "consistent, signed by this lab, verdict PASS" in out
    run = Run.objects.get()
    client_page = _run_page(run)
    assert "Agent under test: openai test://outsider (model well_behaved)" in client_page
    assert "Referee: scenario annotations" in client_page


def _run_page(run: Run) -> str:
    from django.test import Client

    from tests.web.owners import act_as_owner

    client = Client()
    act_as_owner(client)
    return client.get(f"/runs/{run.id}/").content.decode()


@pytest.mark.django_db
def test_a_run_page_names_the_agent_its_spec_names_before_it_starts_and_the_lab_s_own_else():
    spec = AgentSpec(connector="openai", endpoint="http://127.0.0.1:9/v1", model="m2")
    outside = run_start(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED, agent=spec
    )
    assert "Agent under test: openai http://127.0.0.1:9/v1 (model m2)" in _run_page(outside)
    own = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED)
    assert "Agent under test: the lab&#x27;s scripted agent (in process)" in _run_page(own)


@pytest.mark.django_db(transaction=True)
def test_a_free_call_reaches_an_outside_agent_and_is_judged_by_the_invariants(
    outsiders, tmp_path, capsys, fast_clock
):
    lines = tmp_path / "call.txt"
    lines.write_text("I'd like Tuesday morning, please.\nYes, book it.\n")
    call_command("runscenarios", "--free", str(lines), "--agent", "double:well_behaved")
    assert capsys.readouterr().out.strip() == "free PASS"
    run = Run.objects.get()
    assert run.agent_connector == "double"
    # No script: the lab's own understanding judged the caller's turns, and the page says so.
    assert "Referee: the lab&#x27;s understanding" in _run_page(run)


@pytest.mark.models
@pytest.mark.django_db(transaction=True)
def test_by_voice_each_recognized_line_is_refereed_on_what_it_means(outsiders, capsys):
    call_command(
        "runscenarios",
        *("--agent", "double:well_behaved", "--scenario", "double_confirmation"),
        *("--channel", "voice"),
    )
    assert capsys.readouterr().out.strip() == "double_confirmation PASS"
    events = store.run_events(Run.objects.get())
    heard = [e.payload for e in events if e.type == "caller.understood"]
    # Each line's first transcript is read as meant (a split line's later part, if any, is not).
    assert [u.kind for u in heard if u.annotated] == ["request", "confirm", "confirm"]
    assert heard[0].annotated
