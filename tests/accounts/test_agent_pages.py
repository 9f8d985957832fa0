"""/t/<tenant>/agents/: every member reads, owners and admins change, strangers see nothing, and
an agent's URL follows the alert webhooks' target rules; its key is named, never shown."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lab.accounts.models import Agent, Membership, Tenant
from lab.alerts.targets import parse_allowed_hosts

pytestmark = pytest.mark.django_db
PAGE = "/t/demo/agents/"
GOOD = {
    "slug": "support-bot",
    "name": "Support bot",
    "connector": "openai",
    "endpoint": "https://8.8.8.8/v1",
    "model": "llama3",
    "secret_env": "LAB_AGENT_KEY_DEMO__BOT",
}


@pytest.fixture
def tenants() -> dict[str, Tenant]:
    return {slug: Tenant.objects.create(slug=slug) for slug in ("demo", "acme")}


def signed_in(tenants: dict[str, Tenant], role: str, tenant: str = "demo") -> Client:
    user = User.objects.create_user(f"{role}-{tenant}")
    Membership.objects.create(user=user, tenant=tenants[tenant], role=role)
    client = Client()
    client.force_login(user)
    return client


def registered(tenants: dict[str, Tenant], tenant: str = "demo", **fields: str) -> Agent:
    values = {"slug": "bot", "connector": "openai", "endpoint": "https://8.8.8.8/v1", **fields}
    return Agent.objects.create(tenant=tenants[tenant], **values)


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_an_owner_or_admin_registers_edits_and_deletes_an_agent(tenants, role):
    client = signed_in(tenants, role)
    added = client.post(PAGE, GOOD)
    assert added.status_code == 302
    agent = Agent.objects.get()
    assert (agent.tenant.slug, agent.slug, agent.connector, agent.endpoint, agent.model) == (
        "demo",
        "support-bot",
        "openai",
        "https://8.8.8.8/v1",
        "llama3",
    )
    assert agent.secret_env == "LAB_AGENT_KEY_DEMO__BOT"
    page = client.get(PAGE).content.decode()
    assert 'data-agent="support-bot"' in page and "LAB_AGENT_KEY_DEMO__BOT" in page
    edit = f"{PAGE}support-bot/"
    assert 'value="llama3"' in client.get(edit).content.decode()
    changed = {**GOOD, "connector": "pipecat", "endpoint": "wss://8.8.8.8/ws", "model": ""}
    assert client.post(edit, changed).status_code == 302
    agent.refresh_from_db()
    assert (agent.connector, agent.endpoint, agent.model) == ("pipecat", "wss://8.8.8.8/ws", "")
    assert client.post(f"{edit}delete/").status_code == 302
    assert not Agent.objects.exists()


@pytest.mark.parametrize("role", ["operator", "viewer"])
def test_other_members_read_the_list_and_change_nothing(tenants, role):
    agent = registered(tenants)
    client = signed_in(tenants, role)
    page = client.get(PAGE)
    assert page.status_code == 200
    body = page.content.decode()
    assert 'data-agent="bot"' in body and 'id="read-only"' in body
    assert 'id="agent-form"' not in body and "/delete/" not in body
    assert client.post(PAGE, GOOD).status_code == 403
    assert client.get(f"{PAGE}bot/").status_code == 403
    assert client.post(f"{PAGE}bot/", {**GOOD, "model": "other"}).status_code == 403
    assert client.post(f"{PAGE}bot/delete/").status_code == 403
    assert list(Agent.objects.values_list("slug", "model")) == [(agent.slug, "")]


def test_a_non_member_gets_the_same_404_as_for_a_tenant_that_does_not_exist(tenants):
    registered(tenants)
    client = signed_in(tenants, "owner", tenant="acme")
    missing = client.get("/t/nosuch/agents/")
    # The page differs only by the sign-out form's CSRF token.
    words = missing.content.split(b"csrfmiddlewaretoken")[0]
    answers = [
        client.get(PAGE),
        client.post(PAGE, GOOD),
        client.get(f"{PAGE}bot/"),
        client.post(f"{PAGE}bot/", GOOD),
        client.post(f"{PAGE}bot/delete/"),
    ]
    assert missing.status_code == 404
    for answer in answers:
        assert answer.status_code == 404
        assert answer.content.split(b"csrfmiddlewaretoken")[0] == words
        assert b"Not found" in answer.content and b"bot" not in answer.content
    assert Agent.objects.filter(tenant__slug="demo").count() == 1
    assert not Agent.objects.filter(tenant__slug="acme").exists()


def test_another_tenants_agent_is_not_found_under_ones_own_tenant(tenants):
    registered(tenants, tenant="acme", slug="acme-bot")
    client = signed_in(tenants, "owner")
    assert client.get(f"{PAGE}acme-bot/").status_code == 404
    assert client.post(f"{PAGE}acme-bot/delete/").status_code == 404
    assert Agent.objects.filter(slug="acme-bot").exists()


def test_anonymous_visitors_are_sent_to_sign_in_and_change_nothing(tenants):
    registered(tenants)
    for answer in (
        Client().get(PAGE),
        Client().post(PAGE, GOOD),
        Client().post(f"{PAGE}bot/delete/"),
    ):
        assert answer.status_code == 302
        assert answer["Location"].startswith("/accounts/login/")
    assert Agent.objects.count() == 1


def test_the_page_is_never_cached_and_a_change_needs_the_csrf_token(tenants):
    user = User.objects.create_user("careful")
    Membership.objects.create(user=user, tenant=tenants["demo"], role="owner")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    page = client.get(PAGE)
    assert {"private", "no-store"} <= {p.strip() for p in page["Cache-Control"].split(",")}
    assert 'name="csrfmiddlewaretoken"' in page.content.decode()
    assert client.post(PAGE, GOOD).status_code == 403
    assert not Agent.objects.exists()


@pytest.mark.parametrize(
    ("connector", "url", "reason"),
    [
        ("openai", "http://127.0.0.1:11434/v1", "loopback"),
        ("openai", "http://localhost:11434/v1", "this machine"),
        ("openai", "http://10.0.0.5/v1", "private"),
        ("openai", "http://192.168.1.20:8000/v1", "private"),
        ("openai", "http://169.254.169.254/latest/meta-data", "link-local"),
        ("openai", "http://[::1]:8000/v1", "loopback"),
        ("openai", "http://[::ffff:127.0.0.1]/v1", "loopback"),
        ("pipecat", "ws://127.0.0.1:7860/ws", "loopback"),
        ("pipecat", "wss://[fe80::1]/ws", "link-local"),
        ("openai", "ws://8.8.8.8/ws", "needs a http:// or https:// URL"),
        ("pipecat", "https://8.8.8.8/ws", "needs a ws:// or wss:// URL"),
        ("openai", "ftp://8.8.8.8/v1", "needs a http:// or https:// URL"),
        ("openai", "", "needs a URL"),
        ("openai", "https://user:sk-123@8.8.8.8/v1", "no user, password, query"),
        ("openai", "https://8.8.8.8/v1?api_key=sk-123", "no user, password, query"),
        ("openai", "https://8.8.8.8:22/v1", "not a web port"),
        ("scripted", "https://8.8.8.8/v1", "leave the URL empty"),
    ],
)
def test_a_url_the_lab_may_not_call_is_a_clear_form_error(tenants, connector, url, reason):
    client = signed_in(tenants, "admin")
    response = client.post(PAGE, {**GOOD, "connector": connector, "endpoint": url, "model": ""})
    body = response.content.decode()
    assert response.status_code == 400
    assert "No agent was added" in body
    assert 'data-field="endpoint"' in body and reason in body
    assert not Agent.objects.exists()


def test_an_edit_to_an_internal_url_is_refused_and_keeps_the_agent_as_it_was(tenants):
    registered(tenants)
    client = signed_in(tenants, "owner")
    response = client.post(f"{PAGE}bot/", {**GOOD, "endpoint": "http://169.254.169.254/v1"})
    assert response.status_code == 400
    assert "Nothing was saved" in response.content.decode()
    assert Agent.objects.get().endpoint == "https://8.8.8.8/v1"


def test_the_operator_allows_an_internal_host_with_the_alert_setting(tenants, settings):
    client = signed_in(tenants, "owner")
    local = {**GOOD, "endpoint": "http://127.0.0.1:11434/v1"}
    assert client.post(PAGE, local).status_code == 400
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = parse_allowed_hosts("127.0.0.1:11434")
    assert client.post(PAGE, local).status_code == 302
    # The exception is for that port only.
    other_port = {**local, "slug": "other", "endpoint": "http://127.0.0.1:9999/v1"}
    assert client.post(PAGE, other_port).status_code == 400
    assert list(Agent.objects.values_list("slug", flat=True)) == ["support-bot"]


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("secret_env", "sk-live-0123456789", "LAB_AGENT_KEY_"),
        ("secret_env", "LAB_SIGNING_KEY", "LAB_AGENT_KEY_"),
        ("secret_env", "DATABASE_URL", "LAB_AGENT_KEY_"),
        ("connector", "mcp", "choose one of scripted, openai, pipecat"),
        ("slug", "Bad Slug!", "lower-case letters"),
        ("slug", "", "at least 1 character"),
    ],
)
def test_bad_fields_are_named_in_the_form_error(tenants, field, value, words):
    response = signed_in(tenants, "owner").post(PAGE, {**GOOD, field: value})
    body = response.content.decode()
    assert response.status_code == 400
    assert f'data-field="{field}"' in body and words in body
    assert not Agent.objects.exists()


def test_a_slug_is_registered_once_per_tenant(tenants):
    registered(tenants, slug="support-bot")
    response = signed_in(tenants, "owner").post(PAGE, GOOD)
    assert response.status_code == 400
    assert "demo already has an agent support-bot" in response.content.decode()
    assert Agent.objects.count() == 1


def test_the_key_is_named_and_never_shown(tenants, monkeypatch):
    secret = "sk-test-NEVER-SHOWN-4242"
    monkeypatch.setenv("LAB_AGENT_KEY_DEMO__BOT", secret)
    registered(tenants, secret_env="LAB_AGENT_KEY_DEMO__BOT")
    registered(tenants, slug="unset", secret_env="LAB_AGENT_KEY_DEMO__NOBODY")
    client = signed_in(tenants, "owner")
    for url in (PAGE, f"{PAGE}bot/"):
        body = client.get(url).content.decode()
        assert "LAB_AGENT_KEY_DEMO__BOT" in body
        assert secret not in body
    listing = client.get(PAGE).content.decode()
    assert "LAB_AGENT_KEY_DEMO__NOBODY</code> (<span" in listing and "not set in the lab" in listing
    # A key pasted into the field is refused, and not echoed back.
    pasted = client.post(PAGE, {**GOOD, "slug": "pasted", "secret_env": secret})
    assert pasted.status_code == 400
    assert secret not in pasted.content.decode()
    assert not Agent.objects.filter(slug="pasted").exists()


@pytest.mark.parametrize(
    "name",
    [
        "LAB_AGENT_KEY_ACME__BOT",  # another tenant's variable
        "LAB_AGENT_KEY_DEMO",  # no name of its own after the tenant
        "LAB_AGENT_KEY_X",  # a name that carries no tenant
        "LAB_AGENT_KEY_DEMO__ACME__BOT",  # a name with a tenant hidden inside it
        "LAB_AGENT_KEY_DEMO___BOT",
    ],
)
def test_a_key_variable_that_is_not_the_tenants_own_is_refused_at_save(tenants, name):
    client = signed_in(tenants, "owner")
    response = client.post(PAGE, {**GOOD, "secret_env": name})
    assert response.status_code == 400
    assert 'data-field="secret_env"' in response.content.decode()
    assert "LAB_AGENT_KEY_DEMO__NAME" in response.content.decode()
    assert not Agent.objects.exists()


def test_a_page_says_nothing_of_a_variable_that_is_not_the_tenants(tenants, monkeypatch):
    """An older registration naming another tenant's variable: set or not, the page does not say."""
    monkeypatch.setenv("LAB_AGENT_KEY_ACME__BOT", "acme-secret")
    registered(tenants, secret_env="LAB_AGENT_KEY_ACME__BOT")
    registered(tenants, slug="unset", secret_env="LAB_AGENT_KEY_ACME__NOBODY")
    listing = signed_in(tenants, "admin").get(PAGE).content.decode()
    assert "acme-secret" not in listing
    assert "(set)" not in listing and "not set" not in listing
    assert listing.count("not a name of demo's") == 2


def test_tenants_whose_slugs_share_a_key_prefix_own_no_key_variable(tenants):
    Tenant.objects.create(slug="DEMO")
    response = signed_in(tenants, "owner").post(PAGE, GOOD)
    assert response.status_code == 400
    assert "also tenant DEMO&#x27;s" in response.content.decode()
