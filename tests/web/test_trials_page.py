"""runscenarios --trials K records which runs belong to one invocation, and the trials page shows
them side by side per scenario: a verdict per trial, the first failing assertion and its event,
links to each run and report, pass^K and the pass rate; seen only by whoever may see the runs."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from lab.accounts.models import Agent, Membership, Tenant
from lab.events.models import Run, TrialGroup
from lab.events.types import Channel, Mode
from lab.runs.ownership import owner_token_new, share_link_create
from lab.runs.services import run_start
from lab.runs.trials import trial_group_create, trial_runs_owned, trial_table
from tests.connectors.conftest import start_reference_server, stop
from tests.web.owners import act_as_owner

PAGE = re.compile(r"^trials page: (/\S+/)", re.M)


@dataclass
class Row:
    pass_k: str
    verdicts: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    pass_rate: str = ""


class TrialsTable(HTMLParser):
    """The page's rows by scenario: each trial cell's verdict, failing event and links."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.rows: dict[str, Row] = {}
        self.header_trials = 0
        self._row: Row | None = None
        self._text_of = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "th" and self._row is None:
            self._text_of = "th"
        if tag == "tr" and found.get("data-scenario"):
            self._row = self.rows[found["data-scenario"] or ""] = Row(found["data-pass-k"] or "")
        if self._row is None:
            return
        if tag == "td" and found.get("class") == "trial":
            self._row.verdicts.append(found.get("data-verdict") or "")
        if tag == "td" and found.get("class") == "pass-rate":
            self._text_of = "pass-rate"
        if tag == "a" and found.get("class") == "failing-event":
            self._text_of = "failing"
        if tag == "a":
            self._row.links.append(found.get("href") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._text_of == "th" and data.startswith("Trial "):
            self.header_trials += 1
        elif self._text_of == "failing" and self._row is not None:
            self._row.failing.append(data)
        elif self._text_of == "pass-rate" and self._row is not None:
            self._row.pass_rate = data
        self._text_of = ""


@pytest.fixture
def stale_args_agent() -> Iterator[str]:
    """The reference OpenAI-compatible agent that books the request as it was before the
    caller's correction: it FAILs `correction` as-is and PASSes `double_confirmation`."""
    process, url = start_reference_server("stale-args")
    yield url
    stop(process)


def _trials(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    """Run runscenarios --trials; its stdout and the page path it printed."""
    try:
        call_command("runscenarios", *args)
    except SystemExit as exit_info:
        assert exit_info.code == 1
    out = capsys.readouterr().out
    found = PAGE.search(out)
    assert found, out
    return out, found.group(1)


@pytest.mark.django_db(transaction=True)
def test_three_trials_of_a_faulty_agent_show_side_by_side_with_pass_3_per_scenario(
    stale_args_agent: str, capsys: pytest.CaptureFixture[str], fast_clock: object
) -> None:
    out, path = _trials(
        capsys,
        *("--agent", f"openai:{stale_args_agent}", "--as-is", "--trials", "3"),
        *("--scenario", "correction", "--scenario", "double_confirmation"),
    )
    assert "correction pass^3=no pass_rate=0/3" in out
    assert "double_confirmation pass^3=yes pass_rate=3/3" in out
    group = TrialGroup.objects.get()
    assert path == f"/trials/{group.id}/"
    runs = Run.objects.filter(trial_group=group)
    assert sorted((r.scenario_id, r.trial_index) for r in runs) == [
        (s, k) for s in ("correction", "double_confirmation") for k in (1, 2, 3)
    ]

    owner = Client()
    act_as_owner(owner)
    response = owner.get(path)
    assert response.status_code == 200
    html = response.content.decode()
    table = TrialsTable(html)
    assert table.header_trials == 3
    assert set(table.rows) == {"correction", "double_confirmation"}
    failed, passed = table.rows["correction"], table.rows["double_confirmation"]
    assert (failed.pass_k, failed.verdicts, failed.pass_rate) == ("false", ["FAIL"] * 3, "0/3")
    assert (passed.pass_k, passed.verdicts, passed.pass_rate) == ("true", ["PASS"] * 3, "3/3")
    # Each FAIL names its first contradicted assertion (the correction contract's first) and the
    # events against it: the revision the booking ignored and the booking itself.
    assert html.count("<strong>old_proposal_expired</strong> contradicted by") == 3
    assert html.count("</a> intent.revised, ") == 3
    assert html.count("</a> tool.commit.succeeded") == 3
    assert len(failed.failing) == 9 and all(re.fullmatch(r"ev-\d{5}", e) for e in failed.failing)
    assert passed.failing == []
    for run in runs:
        row = table.rows[run.scenario_id]
        assert f"/runs/{run.id}/" in row.links
        assert f"/runs/{run.id}/report.json" in row.links
    assert all(f"#{event_id}" in " ".join(failed.links) for event_id in failed.failing)
    assert "pass^3: <strong>1/2</strong> scenarios" in html
    # Each row's Wilson interval and flip rate: a steady agent flips no verdict.
    assert html.count('<td class="interval"') == 2
    assert "[0%, 56%]" in html and "[44%, 100%]" in html
    assert re.findall(r'<td class="flip-rate"[^>]*>([^<]*)</td>', html) == ["0.00", "0.00"]
    assert "verdicts flipped between trials on <strong>0/2</strong>" in html
    assert "Agent under test: openai " in html
    # Each run's page leads back to its group.
    first = runs.get(scenario_id="correction", trial_index=1)
    run_page = owner.get(f"/runs/{first.id}/").content.decode()
    assert f'href="{path}" id="trials-link">trial 1 of' in run_page


@pytest.fixture
def tenants(db) -> dict[str, Tenant]:
    demo = Tenant.objects.create(slug="demo")
    acme = Tenant.objects.create(slug="acme")
    Agent.objects.create(tenant=demo, slug="demo-agent")
    return {"demo": demo, "acme": acme}


def _member(tenants: dict[str, Tenant], tenant: str, role: str) -> Client:
    user = User.objects.create(username=f"{tenant}-{role}")
    Membership.objects.create(user=user, tenant=tenants[tenant], role=role)
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db(transaction=True)
def test_a_tenants_trials_are_its_members_and_another_tenants_group_is_a_404(
    tenants: dict[str, Tenant], capsys: pytest.CaptureFixture[str], fast_clock: object
) -> None:
    _, path = _trials(
        capsys,
        *("--tenant", "demo", "--agent-slug", "demo-agent", "--trials", "2"),
        *("--scenario", "correction"),
    )
    group = TrialGroup.objects.get()
    assert path == f"/t/demo/trials/{group.id}/"
    viewer = _member(tenants, "demo", "viewer")
    html = viewer.get(path).content.decode()
    row = TrialsTable(html).rows["correction"]
    assert (row.verdicts, row.pass_k) == (["PASS", "PASS"], "true")
    for run in Run.objects.filter(trial_group=group):
        assert f"/t/demo/runs/{run.id}/" in row.links
        assert f"/t/demo/runs/{run.id}/report.json" in row.links
        snapshot = viewer.get(f"/t/demo/runs/{run.id}/").content.decode()
        assert f'href="{path}" id="trials-link"' in snapshot

    listed = viewer.get("/t/demo/trials/").content.decode()
    assert f'href="{path}"' in listed
    assert 'href="/t/demo/trials/"' in html  # the page leads to the tenant's list

    outsider = _member(tenants, "acme", "owner")
    assert str(group.id) not in outsider.get("/t/acme/trials/").content.decode()
    assert outsider.get(f"/t/acme/trials/{group.id}/").status_code == 404
    assert outsider.get(path).status_code == 404
    assert viewer.get(f"/t/acme/trials/{group.id}/").status_code == 404
    anonymous = Client().get(path)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    # Signed in elsewhere is not owning: the public owner page shows nobody else's runs.
    assert viewer.get(f"/trials/{group.id}/").status_code == 404


@pytest.mark.django_db
def test_the_trials_page_is_a_404_for_strangers_unknown_ids_and_share_links() -> None:
    group = trial_group_create(trials=2)
    mine = owner_token_new()
    runs = [
        run_start(
            scenario_id="correction",
            mode=Mode.GUARDED,
            channel=Channel.TYPED,
            owner_token=mine,
            trial=(group, index),
        )
        for index in (1, 2)
    ]
    owner = Client()
    act_as_owner(owner, mine)
    assert owner.get(f"/trials/{group.id}/").status_code == 200
    stranger = Client()
    act_as_owner(stranger, owner_token_new())
    page = stranger.get(f"/trials/{group.id}/")
    assert page.status_code == 404
    assert str(runs[0].id) not in page.content.decode()
    assert Client().get(f"/trials/{group.id}/").status_code == 404
    assert owner.get(f"/trials/{uuid.uuid4()}/").status_code == 404
    assert owner.get("/trials/not-a-group/").status_code == 404
    assert owner.get("/t/demo/trials/not-a-group/").status_code == 404
    # A share link opens its run, not the other trials of its group.
    token = share_link_create(run=runs[0])
    shared = Client().get(f"/share/{token}/").content.decode()
    assert "trials-link" not in shared


@pytest.mark.django_db
def test_a_trial_with_no_run_to_show_counts_as_not_passed() -> None:
    group = trial_group_create(trials=3)
    mine = owner_token_new()
    for index in (1, 3):
        run_start(
            scenario_id="correction",
            mode=Mode.GUARDED,
            channel=Channel.TYPED,
            owner_token=mine,
            trial=(group, index),
        )
    table = trial_table(trial_runs_owned(group.id, mine, None))
    assert table is not None
    (row,) = table.rows
    assert [cell.run is not None for cell in row.cells] == [True, False, True]
    assert row.cells[1].problem == "no run of this trial to show"
    # Runs that never played have no evidence: INCONCLUSIVE, so not one trial passed.
    assert [c.evaluation.verdict.value for c in row.cells if c.evaluation] == ["INCONCLUSIVE"] * 2
    assert (row.passed, row.pass_k) == (0, False)
    assert trial_table(trial_runs_owned(group.id, owner_token_new(), None)) is None
