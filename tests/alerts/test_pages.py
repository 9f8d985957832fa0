from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from lab.accounts.models import Membership, Tenant
from lab.alerts.delivery import WorkerConfig, deliver_due
from lab.alerts.models import WebhookEndpoint
from lab.alerts.outbox import endpoint_create
from lab.alerts.retry import RetryPolicy
from lab.audit.services import audit_record
from tests.alerts.support import critical_entries, receiver

pytestmark = pytest.mark.django_db
PAGE = "/t/demo/alerts/"


@pytest.fixture
def member(client):
    demo = Tenant.objects.create(slug="demo")
    other = Tenant.objects.create(slug="other")

    def sign_in(role: str, tenant: Tenant = demo):
        user = User.objects.create_user(f"{role}-{tenant.slug}")
        Membership.objects.create(user=user, tenant=tenant, role=role)
        client.force_login(user)
        return client

    sign_in.other = other
    return sign_in


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_a_manager_adds_an_endpoint_and_sees_its_secret_only_then(member, role):
    client = member(role)
    added = client.post(PAGE, {"url": "https://hooks.example.com/lab"})
    assert added.status_code == 201
    endpoint = WebhookEndpoint.objects.get()
    assert (endpoint.tenant, endpoint.url, endpoint.active) == (
        "demo",
        "https://hooks.example.com/lab",
        True,
    )
    assert endpoint.secret.startswith("whsec_")
    assert endpoint.secret in added.content.decode()
    later = client.get(PAGE)
    assert later.status_code == 200
    assert "https://hooks.example.com/lab" in later.content.decode()
    assert endpoint.secret not in later.content.decode()


def test_a_manager_disables_and_enables_an_endpoint(member):
    client = member("owner")
    endpoint = endpoint_create(tenant="demo", url="https://hooks.example.com/lab")
    url = f"{PAGE}endpoints/{endpoint.id}/active/"
    assert client.post(url, {"active": "0"}).status_code == 302
    endpoint.refresh_from_db()
    assert not endpoint.active
    client.post(url, {"active": "1"})
    endpoint.refresh_from_db()
    assert endpoint.active
    assert client.post(url, {"active": "maybe"}).status_code == 400


@pytest.mark.parametrize("url", ["", "ftp://example.com/x", "not a url", "https://" + "a" * 600])
def test_a_bad_url_is_a_clear_400_and_adds_nothing(member, url):
    response = member("admin").post(PAGE, {"url": url})
    assert response.status_code == 400
    assert "No endpoint was added" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize("role", ["operator", "viewer"])
def test_operators_and_viewers_are_refused(member, role):
    client = member(role)
    endpoint = endpoint_create(tenant="demo", url="https://hooks.example.com/lab")
    assert client.get(PAGE).status_code == 403
    assert client.post(PAGE, {"url": "https://evil.example.com/"}).status_code == 403
    assert client.post(f"{PAGE}endpoints/{endpoint.id}/active/", {"active": "0"}).status_code == 403
    assert WebhookEndpoint.objects.get().active


def test_another_tenants_owner_and_strangers_see_no_such_page(member, client):
    response = client.get(PAGE)
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    owner = member("owner", member.other)
    assert owner.get(PAGE).status_code == 404
    assert owner.get("/t/nowhere/alerts/").status_code == 404
    endpoint = endpoint_create(tenant="demo", url="https://hooks.example.com/lab")
    # Their own tenant's page cannot reach another tenant's endpoint either.
    toggle = f"/t/other/alerts/endpoints/{endpoint.id}/active/"
    assert owner.post(toggle, {"active": "0"}).status_code == 404


def test_the_page_lists_recent_deliveries_with_each_attempt(member):
    client = member("owner")
    config = WorkerConfig(
        timeout_s=30, lease_s=60, policy=RetryPolicy(base_s=5, cap_s=60, max_attempts=3)
    )
    with receiver([500]) as hook:
        endpoint_create(tenant="demo", url=hook.url)
        audit_record(entry=critical_entries()[0])
        deliver_due(config=config, worker="w1")
    page = client.get(PAGE).content.decode()
    assert "HTTP 500" in page
    assert "next try" in page
    assert "price1-t2" in page


def test_a_flags_queue_card_shows_its_delivery_attempts(member):
    client = member("operator")
    config = WorkerConfig(
        timeout_s=30, lease_s=60, policy=RetryPolicy(base_s=5, cap_s=60, max_attempts=3)
    )
    with receiver([502]) as hook:
        endpoint_create(tenant="demo", url=hook.url)
        record = audit_record(entry=critical_entries()[0])
        deliver_due(config=config, worker="w1")
    page = client.get("/t/demo/queue/").content.decode()
    # The payload's operator_console link (#audit_<id>) lands on this section of the card.
    assert f'id="audit_{record.id}"' in page
    assert "HTTP 502" in page
    assert "next try" in page
