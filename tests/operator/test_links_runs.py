"""A lab run's pages for the tenant's members: the stored log drawn read-only and the signed
report, reachable only for a run of the tenant with its audit rows; /runs/<id>/ stays its
owner's."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest
from django.test import Client

from lab.accounts.agents import AgentRef
from lab.accounts.roles import Role
from lab.alerts.models import OutboxMessage
from lab.alerts.outbox import endpoint_create
from lab.alerts.payload import AlertPayload
from lab.audit.models import AuditRecord
from lab.audit.schema import AuditChannel
from lab.audit.services import audit_record
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.reports.services import report_verify
from lab.runs.services import run_start
from lab.web.management.headless import play_headless
from tests.operator.conftest import graded, member, one_call


def snapshot(run: Run, tenant: str = "demo") -> str:
    return f"/t/{tenant}/runs/{run.id}/"


def started(agent: AgentRef | None = None) -> Run:
    return run_start(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED, tenant_agent=agent
    )


@pytest.mark.django_db
def test_a_run_without_audit_rows_of_the_tenant_has_no_tenant_pages(client, members, outsider):
    bare = started(AgentRef("acme", "bot"))
    theirs = started(AgentRef("acme", "bot"))
    entry = graded(one_call("c"))[1].model_copy(
        update={"tenant": "acme", "run_id": theirs.id, "channel": AuditChannel.TYPED}
    )
    audit_record(entry=entry, run=theirs)
    client.force_login(members[Role.OWNER])
    for run in (bare, theirs):
        assert client.get(snapshot(run)).status_code == 404
        assert client.get(f"{snapshot(run)}report.json").status_code == 404
    client.force_login(outsider)
    assert client.get(snapshot(theirs, "acme")).status_code == 200
    assert client.get(snapshot(bare, "acme")).status_code == 404
    # The tenant reads the run through its audit rows; the run's own pages stay its owner's.
    assert client.get(f"/runs/{theirs.id}/").status_code == 404
    assert client.get(f"/runs/{theirs.id}/report.json").status_code == 404
    anonymous = Client().get(snapshot(theirs, "acme"))
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


@pytest.mark.django_db(transaction=True)
def test_members_read_a_played_runs_log_and_report_and_follow_the_webhook(
    demo, settings, fast_clock
):
    settings.LAB_PUBLIC_URL = "https://lab.example"
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/a")
    people = {role: member(f"{role.value}1", demo, role) for role in Role}
    run = run_start(
        scenario_id="facts_before_booking",
        mode=Mode.GUARDED,
        channel=Channel.TYPED,
        ungrounded=True,
        tenant_agent=AgentRef("demo", "demo-agent"),
    )
    asyncio.run(play_headless(run))
    flagged = list(AuditRecord.objects.filter(run=run, flagged=True).select_related("case"))
    assert flagged
    for role, user in people.items():
        client = Client()
        client.force_login(user)
        page = client.get(snapshot(run))
        assert page.status_code == 200, role
        html = page.content.decode()
        assert flagged[0].utterance in html and 'class="badge grade unsupported"' in html
        # Drawn once on the server: nothing connects and nothing drives.
        assert "ws-connect" not in html and 'id="say-form"' not in html
        assert 'data-verdict="FAIL"' in html
        report = client.get(f"{snapshot(run)}report.json")
        assert report.status_code == 200, role
        verification = report_verify(report.content)
        assert verification.consistent and verification.report is not None
        assert verification.report.run_id == str(run.id)
        assert client.get(f"/t/demo/calls/{run.id}/").status_code == 200
        # The owner rule is unchanged: the run's own pages still 404 for the tenant's members.
        assert client.get(f"/runs/{run.id}/").status_code == 404
        assert client.get(f"/runs/{run.id}/report.json").status_code == 404
    operator = Client()
    operator.force_login(people[Role.OPERATOR])
    queue = operator.get("/t/demo/queue/").content.decode()
    assert f'href="/t/demo/runs/{run.id}/"' in queue
    assert f'href="/t/demo/runs/{run.id}/report.json" download' in queue
    assert f'href="/runs/{run.id}/' not in queue
    messages = list(OutboxMessage.objects.filter(record__run=run).select_related("record__case"))
    assert {m.record_id for m in messages} <= {r.id for r in flagged} and messages
    for message in messages:
        links = AlertPayload.model_validate(message.payload).links
        assert links.transcript is not None and links.audio is None
        for link in (links.operator_console, links.transcript):
            assert operator.get(urlsplit(link).path).status_code == 200, link
        assert urlsplit(links.operator_console).path.endswith(f"/cases/{message.record.case.id}/")
