"""/t/<tenant>/settings/: owners and admins set alert_on_warn and read what the operator keeps
for the tenant (its constraint lists, the internal hosts its agents may reach)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lab.accounts.models import Membership, Tenant
from lab.alerts.targets import parse_allowed_hosts

pytestmark = pytest.mark.django_db
PAGE = "/t/demo/settings/"


@pytest.fixture
def tenants() -> dict[str, Tenant]:
    return {slug: Tenant.objects.create(slug=slug) for slug in ("demo", "acme")}


def signed_in(tenants: dict[str, Tenant], role: str, tenant: str = "demo") -> Client:
    user = User.objects.create_user(f"{role}-{tenant}")
    Membership.objects.create(user=user, tenant=tenants[tenant], role=role)
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_an_owner_or_admin_sets_alert_on_warn_and_clears_it(tenants, role, settings):
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = parse_allowed_hosts("127.0.0.1:8001")
    client = signed_in(tenants, role)
    page = client.get(PAGE).content.decode()
    assert 'id="alert-on-warn">' in page
    assert 'data-version="demo_v1"' in page and "grades new turns" in page
    assert "<code>127.0.0.1:8001</code>" in page and "LAB_OUTBOUND_ALLOWED_HOSTS" in page
    assert client.post(PAGE, {"alert_on_warn": "on"}).status_code == 302
    assert Tenant.objects.get(slug="demo").alert_on_warn
    assert 'id="alert-on-warn" checked>' in client.get(PAGE).content.decode()
    assert client.post(PAGE, {}).status_code == 302
    assert not Tenant.objects.get(slug="demo").alert_on_warn
    assert not Tenant.objects.get(slug="acme").alert_on_warn
    # The header's console links to it for the roles that may open it.
    assert f'href="{PAGE}">Settings</a>' in client.get("/t/demo/agents/").content.decode()


@pytest.mark.parametrize("role", ["operator", "viewer"])
def test_other_members_may_neither_read_nor_change_it(tenants, role):
    client = signed_in(tenants, role)
    assert client.get(PAGE).status_code == 403
    assert client.post(PAGE, {"alert_on_warn": "on"}).status_code == 403
    assert not Tenant.objects.get(slug="demo").alert_on_warn
    assert "Settings</a>" not in client.get("/t/demo/agents/").content.decode()


def test_strangers_see_no_such_page_and_anonymous_visitors_sign_in(tenants):
    stranger = signed_in(tenants, "owner", tenant="acme")
    assert stranger.get(PAGE).status_code == 404
    assert stranger.post(PAGE, {"alert_on_warn": "on"}).status_code == 404
    anonymous = Client().get(PAGE)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert not Tenant.objects.get(slug="demo").alert_on_warn
