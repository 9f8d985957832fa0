"""The operator console in every page's header, and what the home page tells a member."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User

from lab.accounts.models import Membership, Tenant

pytestmark = pytest.mark.django_db


def _member(username: str, roles: dict[str, str]) -> User:
    user = User.objects.create(username=username)
    for slug, role in roles.items():
        tenant, _ = Tenant.objects.get_or_create(slug=slug, defaults={"name": slug.title()})
        Membership.objects.create(user=user, tenant=tenant, role=role)
    return user


def _nav(html: str) -> str:
    found = re.search(r'<nav class="console" id="console-nav".*?</nav>', html, re.S)
    assert found, "no console in the header"
    return found.group(0)


def test_an_owner_finds_every_console_page_of_each_tenant_in_the_header(client):
    client.force_login(_member("olive", {"demo": "owner", "acme": "viewer"}))
    for page in ("/", "/accounts/tokens/", "/t/demo/queue/"):
        nav = _nav(client.get(page).content.decode())
        links = re.findall(r'href="([^"]+)"', nav)
        assert {"/t/demo/queue/", "/t/demo/rollup/", "/t/demo/alerts/"} <= set(links), page
        # A viewer of acme gets its queue, never the pages its role refuses.
        assert "/t/acme/queue/" in links
        assert "/t/acme/rollup/" not in links and "/t/acme/alerts/" not in links
    header = client.get("/").content.decode().split("</header>")[0]
    assert 'href="/accounts/tokens/" id="tokens-link"' in header


def test_every_linked_console_page_opens_for_its_member(client):
    client.force_login(_member("olive", {"demo": "owner"}))
    for link in re.findall(r'href="([^"]+)"', _nav(client.get("/").content.decode())):
        assert client.get(link).status_code == 200, link


def test_an_anonymous_visitor_gets_no_console_but_is_told_what_signing_in_opens(client):
    html = client.get("/").content.decode()
    assert 'id="console-nav"' not in html
    intro = html.split('id="console-intro"')[1].split("</section>")[0]
    assert "sign in" in intro.lower() and "flag queue" in intro


def test_the_home_page_tells_a_member_what_they_can_do_and_names_the_demo_business(client):
    client.force_login(_member("olive", {"demo": "operator"}))
    html = client.get("/").content.decode()
    intro = html.split('id="console-intro"')[1].split("</section>")[0]
    assert 'href="/t/demo/queue/"' in intro and "acknowledge, override or escalate" in intro
    assert "/t/demo/rollup/" not in intro
    business = html.split('id="demo-business"')[1].split("</p>")[0]
    assert "Northgate Cycle Works" in business and "flat tire repair" in business
