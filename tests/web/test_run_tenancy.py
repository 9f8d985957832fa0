"""A run belongs to the tenant and agent it was started for: a public run writes into no
tenant's audit trail, queue or alerts; a member's run for their agent writes into theirs."""

from __future__ import annotations

import asyncio
import contextlib
import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from lab.accounts.agents import AgentRef
from lab.accounts.models import Agent, Membership, Tenant
from lab.alerts.models import OutboxMessage
from lab.alerts.outbox import endpoint_create
from lab.alerts.targets import parse_allowed_hosts
from lab.audit.models import AuditRecord
from lab.audit.schema import AuditChannel
from lab.audit.services import audit_record
from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.operator.models import FlagCase
from lab.runs.services import run_start
from lab.web.management.headless import play_headless
from tests.operator.conftest import graded, one_call

DEMO_AGENT = AgentRef("demo", "demo-agent")


@pytest.fixture(autouse=True)
def loopback_receivers(settings):
    """This file's webhook endpoint is on loopback, which alerts reach only when it is named."""
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = parse_allowed_hosts("127.0.0.1")


@pytest.fixture
def tenants(db) -> dict[str, Tenant]:
    demo = Tenant.objects.create(slug="demo")
    acme = Tenant.objects.create(slug="acme")
    Agent.objects.create(tenant=demo, slug="demo-agent")
    Agent.objects.create(tenant=acme, slug="acme-bot")
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/hook")
    return {"demo": demo, "acme": acme}


def member(tenants: dict[str, Tenant], tenant: str, role: str) -> Client:
    user = User.objects.create(username=f"{tenant}-{role}")
    Membership.objects.create(user=user, tenant=tenants[tenant], role=role)
    client = Client()
    client.force_login(user)
    return client


def played(agent: AgentRef | None) -> Run:
    run = run_start(
        scenario_id="facts_before_booking",
        mode=Mode.GUARDED,
        channel=Channel.TYPED,
        ungrounded=True,
        tenant_agent=agent,
    )
    asyncio.run(play_headless(run))
    return run


def landed(tenant: str | None = None) -> tuple[int, int, int]:
    rows = (
        AuditRecord.objects.all() if tenant is None else AuditRecord.objects.filter(tenant=tenant)
    )
    cases = FlagCase.objects.all() if tenant is None else FlagCase.objects.filter(tenant=tenant)
    return rows.count(), cases.count(), OutboxMessage.objects.count()


@pytest.mark.django_db(transaction=True)
def test_a_public_run_is_graded_on_its_page_and_lands_in_no_tenant(tenants, fast_clock):
    run = played(None)
    events = store.run_events(run)
    grades = [e.payload.grade.verdict for e in events if e.type == "turn.graded"]
    assert "unsupported" in grades  # the ungrounded agent's inventions are still caught
    assert landed() == (0, 0, 0)
    # Demo's viewer cannot read the stranger's transcript through the tenant's pages.
    viewer = member(tenants, "demo", "viewer")
    assert viewer.get(f"/t/demo/runs/{run.id}/").status_code == 404
    assert viewer.get(f"/t/demo/calls/{run.id}/").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_a_run_for_a_tenants_agent_lands_there_and_only_there(tenants, fast_clock):
    run = played(DEMO_AGENT)
    rows, cases, alerts = landed("demo")
    assert rows and cases and alerts
    assert set(AuditRecord.objects.values_list("tenant", "agent")) == {("demo", "demo-agent")}
    assert landed("acme")[:2] == (0, 0)
    viewer = member(tenants, "demo", "viewer")
    assert viewer.get(f"/t/demo/runs/{run.id}/").status_code == 200
    outsider = member(tenants, "acme", "owner")
    assert outsider.get(f"/t/acme/runs/{run.id}/").status_code == 404


def test_rows_an_older_lab_filed_under_a_tenant_do_not_open_a_strangers_run(tenants):
    stranger = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED)
    entry = graded(one_call("c"))[0].model_copy(
        update={
            "run_id": stranger.id,
            "channel": AuditChannel.TYPED,
            "call_id": str(stranger.id),
        }
    )
    audit_record(entry=entry, run=stranger)
    viewer = member(tenants, "demo", "viewer")
    assert viewer.get(f"/t/demo/runs/{stranger.id}/").status_code == 404
    assert viewer.get(f"/t/demo/runs/{stranger.id}/report.json").status_code == 404


@pytest.mark.parametrize(
    ("who", "agent", "status"),
    [
        ("anonymous", "demo/demo-agent", 403),
        ("acme-owner", "demo/demo-agent", 404),
        ("demo-viewer", "demo/demo-agent", 403),
        ("demo-operator", "demo/nosuch", 404),
        ("demo-operator", "acme/acme-bot", 404),
        ("demo-operator", "nonsense", 404),
    ],
)
def test_the_picker_starts_runs_only_for_ones_own_tenants_agents(tenants, who, agent, status):
    client = Client() if who == "anonymous" else member(tenants, *who.split("-"))
    response = client.post("/runs/", {"scenario": "correction", "agent": agent})
    assert response.status_code == status
    assert "The run could not start" in response.content.decode()
    assert not Run.objects.exists()


@pytest.mark.parametrize("role", ["operator", "admin", "owner"])
def test_an_operator_or_above_starts_a_run_for_their_agent(tenants, role):
    client = member(tenants, "demo", role)
    assert 'value="demo/demo-agent"' in client.get("/").content.decode()
    response = client.post("/runs/", {"scenario": "correction", "agent": "demo/demo-agent"})
    assert response.status_code == 302
    run = Run.objects.get()
    assert (run.tenant, run.agent) == ("demo", "demo-agent")
    assert "for demo/demo-agent" in client.get(response["Location"]).content.decode()
    public = client.post("/runs/", {"scenario": "correction"})
    assert public.status_code == 302
    assert Run.objects.filter(tenant="").count() == 1


def test_a_viewer_and_a_stranger_are_offered_no_agent(tenants):
    assert 'name="agent"' not in Client().get("/").content.decode()
    assert 'name="agent"' not in member(tenants, "demo", "viewer").get("/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_runscenarios_attributes_only_when_told_and_checks_the_agent(tenants, fast_clock):
    def run(*args: str) -> None:
        # SystemExit: FAIL is the ungrounded agent's verdict.
        with contextlib.suppress(SystemExit):
            call_command(
                "runscenarios",
                "--scenario",
                "facts_before_booking",
                "--ungrounded",
                *args,
                stdout=io.StringIO(),
                stderr=io.StringIO(),
            )

    run()
    assert landed() == (0, 0, 0)
    run("--tenant", "demo", "--agent-slug", "demo-agent")
    assert landed("demo")[0] > 0 and landed("acme")[0] == 0
    assert set(Run.objects.values_list("tenant", flat=True)) == {"", "demo"}
    for args, words in (
        (["--tenant", "demo"], "go together"),
        (["--agent-slug", "demo-agent"], "go together"),
        (["--tenant", "acme", "--agent-slug", "demo-agent"], "has no agent"),
        (["--tenant", "nosuch", "--agent-slug", "x"], "has no agent"),
    ):
        with pytest.raises(CommandError, match=words):
            run(*args)
