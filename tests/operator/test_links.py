"""The pages a card and a webhook link to, for imported calls: one case's card, the call's
transcript; members of the tenant only, whatever their role."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from lab.accounts.roles import Role
from lab.alerts.models import OutboxMessage
from lab.alerts.outbox import endpoint_create
from lab.alerts.payload import AlertPayload
from lab.audit.models import AuditRecord
from lab.audit.services import audit_records_store
from lab.operator.models import FlagCase
from tests.audit.calls import demo_calls
from tests.operator.conftest import graded, one_call

pytestmark = pytest.mark.django_db


def case_url(case: FlagCase) -> str:
    return f"/t/{case.tenant}/queue/cases/{case.id}/"


def card_ids(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<article class="card queue-card" id="case-(\d+)"', html)]


def agent_turns(html: str) -> list[tuple[str, bool]]:
    """Each agent turn the call page shows: its audit ref, and whether it is marked flagged."""
    found = re.findall(r'<article class="graded-turn( flagged)?" id="(audit_\d+)"', html)
    return [(ref, bool(flagged)) for flagged, ref in found]


@pytest.mark.parametrize("role", list(Role))
def test_a_member_opens_one_case_alone_and_only_actors_get_its_buttons(
    client, members, flagged, role
):
    case = flagged[-1]  # the oldest: not on the queue's first page once it is long
    client.force_login(members[role])
    response = client.get(case_url(case))
    assert response.status_code == 200
    html = response.content.decode()
    assert card_ids(html) == [case.id]
    assert case.record.utterance in html
    act = f'hx-post="/t/demo/queue/cases/{case.id}/act/"'
    assert (act in html) is (role is not Role.VIEWER)


def test_an_action_taken_on_the_case_page_answers_with_its_card(client, members, flagged):
    case = flagged[0]
    client.force_login(members[Role.OPERATOR])
    answer = client.post(
        f"{case_url(case)}act/",
        {"action": "acknowledge", "expected_version": case.version},
        headers={"HX-Request": "true"},
    )
    assert answer.status_code == 200
    assert card_ids(answer.content.decode()) == [case.id]
    assert 'data-state="acknowledged"' in client.get(case_url(case)).content.decode()


def test_no_case_page_for_strangers_unknown_ids_or_another_tenants_case(
    client, members, flagged, outsider
):
    case = flagged[0]
    anonymous = client.get(case_url(case))
    assert anonymous.status_code == 302
    assert anonymous["Location"] == f"/accounts/login/?next={case_url(case)}"
    client.force_login(outsider)
    assert client.get(case_url(case)).status_code == 404
    theirs = FlagCase.objects.filter(tenant="acme").first()
    assert theirs is not None and client.get(case_url(theirs)).status_code == 200
    client.force_login(members[Role.OWNER])
    assert client.get(f"/t/demo/queue/cases/{theirs.id}/").status_code == 404
    assert client.get("/t/demo/queue/cases/999999/").status_code == 404
    assert client.get(f"/t/demo/queue/cases/{2**64}/").status_code == 404


@pytest.mark.parametrize("role", list(Role))
def test_a_member_reads_an_imported_call_in_turn_order_its_flags_marked(client, members, role):
    records = audit_records_store(graded(one_call("mixed"))).records
    client.force_login(members[role])
    response = client.get("/t/demo/calls/mixed/")
    assert response.status_code == 200
    html = response.content.decode()
    assert agent_turns(html) == [(r.ref, r.flagged) for r in records]
    assert [r.flagged for r in records] == [False, True, False]
    for record in records:
        assert record.utterance in html and record.caller_turn in html
    assert 'class="badge grade unsupported"' in html
    assert "An imported call" in html
    # The flagged turn links its card.
    assert f'href="/t/demo/queue/cases/{records[1].case.id}/"' in html


def test_no_call_page_for_strangers_unknown_calls_or_another_tenants_call(
    client, members, outsider
):
    audit_records_store(graded(one_call("mixed")))
    anonymous = client.get("/t/demo/calls/mixed/")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    client.force_login(outsider)
    assert client.get("/t/demo/calls/mixed/").status_code == 404
    # acme holds the demo calls under the same ids: its own member reads them, no one else.
    assert client.get("/t/acme/calls/price1/").status_code == 200
    client.force_login(members[Role.OWNER])
    assert client.get("/t/acme/calls/price1/").status_code == 404
    assert client.get("/t/demo/calls/nosuch/").status_code == 404


def test_a_call_id_with_a_slash_or_a_hash_has_a_page(client, members):
    lines = [{**line, "call_id": "crm/42#a"} for line in one_call("x")]
    records = audit_records_store(graded(lines)).records
    client.force_login(members[Role.VIEWER])
    link = "/t/demo/calls/crm/42%23a/"
    assert [ref for ref, _ in agent_turns(client.get(link).content.decode())] == [
        r.ref for r in records
    ]


def test_the_card_links_its_case_and_call_and_no_run_for_an_imported_call(client, members, flagged):
    client.force_login(members[Role.OPERATOR])
    html = client.get("/t/demo/queue/").content.decode()
    for case in flagged:
        assert f'href="{case_url(case)}"' in html
        assert f'href="/t/demo/calls/{case.record.call_id}/#{case.record.ref}"' in html
    assert "/runs/" not in html


def test_the_webhook_links_resolve_for_a_member_and_keep_no_audio(client, members, demo, settings):
    settings.LAB_PUBLIC_URL = "https://lab.example"
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/a")
    audit_records_store(graded(demo_calls()[0]))
    messages = list(OutboxMessage.objects.select_related("record__case"))
    assert messages
    client.force_login(members[Role.VIEWER])
    for message in messages:
        alert = AlertPayload.model_validate(message.payload)
        record: AuditRecord = message.record
        assert alert.audit_row_ref == record.ref
        assert alert.links.operator_console == (
            f"https://lab.example/t/demo/queue/cases/{record.case.id}/"
        )
        assert alert.links.transcript == (
            f"https://lab.example/t/demo/calls/{record.call_id}/#{record.ref}"
        )
        assert alert.links.audio is None
        for link in (alert.links.operator_console, alert.links.transcript):
            parts = urlsplit(link)
            assert parts.netloc == "lab.example"
            page = client.get(parts.path)
            assert page.status_code == 200, link
        assert (
            f'id="{record.ref}"'
            in client.get(urlsplit(alert.links.transcript).path).content.decode()
        )
