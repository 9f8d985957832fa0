"""A tenant's registered agent under test: runs (the picker's, `runscenarios --agent-slug`) reach
it through its own connector, URL, model and key, land in its tenant, and are refused in words
when its URL or key is not usable; the key itself goes nowhere but the agent's server."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from lab.accounts.agents import AgentRef, AgentRefused, agent_ready
from lab.accounts.models import Agent, Membership, Tenant
from lab.alerts.targets import parse_allowed_hosts
from lab.audit.models import AuditRecord
from lab.connectors import registry
from lab.events import store
from lab.events.models import Run, StoredEvent
from lab.events.types import Channel, Mode
from lab.runs.run_agent import agent_spec
from lab.runs.services import run_start
from lab.web.management.headless import play_headless

Start = Callable[[str | None], str]
SECRET = "sk-test-registered-0123456789"
KEY_ENV = "LAB_AGENT_KEY_DEMO__BOT"


@pytest.fixture
def demo(db) -> Tenant:
    return Tenant.objects.create(slug="demo")


def register(tenant: Tenant, endpoint: str, **fields: str) -> AgentRef:
    values = {"connector": "openai", "model": "asked-for", "secret_env": KEY_ENV, **fields}
    return AgentRef.of(Agent.objects.create(tenant=tenant, slug="bot", endpoint=endpoint, **values))


def allow(settings, url: str) -> None:
    parts = urlsplit(url)
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = parse_allowed_hosts(f"{parts.hostname}:{parts.port}")


def run_for(ref: AgentRef) -> Run:
    return run_start(
        scenario_id="correction",
        mode=Mode.GUARDED,
        channel=Channel.TYPED,
        agent=ref.spec(),
        tenant_agent=ref,
    )


@pytest.mark.django_db(transaction=True)
def test_runscenarios_with_agent_slug_tests_the_registered_agent_and_keeps_its_key_out(
    reference_server: Start,
    demo: Tenant,
    settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fast_clock: object,
    tmp_path: Path,
) -> None:
    url = reference_server(None)
    allow(settings, url)
    monkeypatch.setenv(KEY_ENV, SECRET)
    register(demo, url)
    call_command(
        "runscenarios",
        *("--scenario", "correction", "--tenant", "demo", "--agent-slug", "bot"),
        *("--out", str(tmp_path)),
    )
    assert capsys.readouterr().out.splitlines() == ["correction PASS"]
    run = Run.objects.get()
    assert (run.tenant, run.agent, run.agent_connector, run.agent_endpoint) == (
        "demo",
        "bot",
        "openai",
        url,
    )
    assert (run.agent_model, run.agent_key_env) == ("asked-for", KEY_ENV)
    started = store.run_events(run)[0]
    assert started.type == "run.started" and started.payload.agent is not None
    assert (started.payload.agent.connector, started.payload.agent.endpoint) == ("openai", url)
    assert AuditRecord.objects.filter(tenant="demo", agent="bot").exists()
    report = (tmp_path / "correction.json").read_text()
    payloads = json.dumps(list(StoredEvent.objects.values_list("payload", flat=True)))
    for written in (report, payloads):
        assert SECRET not in written
        assert KEY_ENV not in written


@pytest.mark.django_db(transaction=True)
def test_runscenarios_refuses_the_registered_agent_in_words_before_any_run(
    demo: Tenant, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = register(demo, "http://127.0.0.1:11434/v1", secret_env="")
    args = ("runscenarios", "--scenario", "correction", "--tenant", "demo", "--agent-slug", "bot")
    loopback = r"its URL is refused: 127\.0\.0\.1 is a loopback address"
    with pytest.raises(CommandError, match=loopback):
        call_command(*args)
    allow(settings, ref.endpoint)
    Agent.objects.filter(slug="bot").update(secret_env="LAB_AGENT_KEY_DEMO__NOBODY")
    monkeypatch.delenv("LAB_AGENT_KEY_DEMO__NOBODY", raising=False)
    with pytest.raises(CommandError, match="LAB_AGENT_KEY_DEMO__NOBODY is not set"):
        call_command(*args)
    with pytest.raises(CommandError, match="drop --agent and --model"):
        call_command(*args, "--agent", "openai:http://127.0.0.1:9/v1")
    assert not Run.objects.exists()


def test_a_tenant_run_reads_its_key_from_the_named_variable_only(
    demo: Tenant, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    monkeypatch.setenv("LAB_AGENT_API_KEY", "the-labs-own-key")
    ref = register(demo, "https://8.8.8.8/v1")
    named = agent_spec(run_for(ref))
    assert named is not None and named.api_key == SECRET
    Agent.objects.update(secret_env="")
    keyless = agent_spec(run_for(AgentRef.of(Agent.objects.get())))
    # A tenant's agent never gets the key the lab's operator keeps for the shell's runs.
    assert keyless is not None and keyless.api_key is None
    public = run_start(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.TYPED, agent=ref.spec()
    )
    shell = agent_spec(public)
    assert shell is not None and shell.api_key == "the-labs-own-key"


@pytest.mark.django_db(transaction=True)
def test_the_url_is_checked_again_when_the_run_connects(
    demo: Tenant, monkeypatch: pytest.MonkeyPatch, fast_clock: object
) -> None:
    """A name that was public when saved and points inside when the run connects is refused."""
    points_to = ["8.8.8.8"]
    real = socket.getaddrinfo

    def resolving(host: str, port: object, *args: object, **kwargs: object) -> object:
        if host != "agent.example.test":
            return real(host, port, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (points_to[0], 443))]

    monkeypatch.setattr(socket, "getaddrinfo", resolving)
    monkeypatch.setenv(KEY_ENV, SECRET)
    ref = register(demo, "https://agent.example.test/v1")
    assert agent_ready(ref) is not None
    run = run_for(ref)
    points_to[0] = "169.254.169.254"
    asyncio.run(play_headless(run))
    events = store.run_events(run)
    assert [event.type for event in events] == ["run.started", "run.ended"]
    ended = events[-1].payload
    assert ended.reason_kind == "error"
    assert "the agent under test was not connected: its URL is refused" in ended.reason
    assert "agent.example.test resolves to 169.254.169.254 is a link-local" in ended.reason


@pytest.mark.django_db(transaction=True)
def test_a_key_variable_unset_by_connect_time_ends_the_run_in_words(
    demo: Tenant, settings, monkeypatch: pytest.MonkeyPatch, fast_clock: object
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    ref = register(demo, "http://127.0.0.1:9/v1")
    allow(settings, ref.endpoint)
    assert agent_ready(ref) is not None
    run = run_for(ref)
    monkeypatch.delenv(KEY_ENV)
    asyncio.run(play_headless(run))
    ended = store.run_events(run)[-1].payload
    assert ended.reason_kind == "error"
    assert f"its key's variable {KEY_ENV} is not set" in ended.reason


@pytest.mark.django_db(transaction=True)
def test_a_key_variable_of_another_tenant_is_never_read_for_this_one(
    demo: Tenant, settings, monkeypatch: pytest.MonkeyPatch, fast_clock: object
) -> None:
    """A registration that names another tenant's variable (saved before names carried their
    tenant) is refused before the run and when it connects; the key is never read for it."""
    Tenant.objects.create(slug="acme")
    monkeypatch.setenv("LAB_AGENT_KEY_ACME__BOT", "acme-secret")
    ref = register(demo, "http://127.0.0.1:9/v1", secret_env="LAB_AGENT_KEY_ACME__BOT")
    allow(settings, ref.endpoint)
    with pytest.raises(AgentRefused, match="LAB_AGENT_KEY_ACME__BOT is not demo's"):
        agent_ready(ref)
    run = run_for(ref)
    spec = agent_spec(run)
    assert spec is not None and spec.api_key is None
    asyncio.run(play_headless(run))
    ended = store.run_events(run)[-1].payload
    assert ended.reason_kind == "error"
    assert "LAB_AGENT_KEY_ACME__BOT is not demo's" in ended.reason
    assert "acme-secret" not in json.dumps(
        list(StoredEvent.objects.values_list("payload", flat=True))
    )


def operator_of(tenant: Tenant) -> Client:
    user = User.objects.create_user("op")
    Membership.objects.create(user=user, tenant=tenant, role="operator")
    client = Client()
    client.force_login(user)
    return client


def test_the_picker_offers_the_registered_agent_with_its_connector_and_starts_it(
    demo: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    register(demo, "wss://8.8.8.8/ws", connector="pipecat", model="")
    client = operator_of(demo)
    picker = client.get("/").content.decode()
    assert '<option value="demo/bot">demo/bot · pipecat bot (eval wire)</option>' in picker
    started = client.post("/runs/", {"scenario": "correction", "agent": "demo/bot"})
    assert started.status_code == 302
    run = Run.objects.get()
    assert (run.tenant, run.agent, run.agent_connector, run.agent_endpoint) == (
        "demo",
        "bot",
        "pipecat",
        "wss://8.8.8.8/ws",
    )
    assert SECRET not in client.get(started["Location"]).content.decode()


def test_the_picker_refuses_a_registered_agent_it_cannot_reach_and_starts_nothing(
    demo: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    register(demo, "https://8.8.8.8/v1")
    client = operator_of(demo)
    missing_key = client.post("/runs/", {"scenario": "correction", "agent": "demo/bot"})
    assert missing_key.status_code == 409
    assert f"its key&#x27;s variable {KEY_ENV} is not set" in missing_key.content.decode()
    Agent.objects.update(endpoint="http://10.1.2.3/v1", secret_env="")
    internal = client.post("/runs/", {"scenario": "correction", "agent": "demo/bot"})
    assert internal.status_code == 409
    assert "10.1.2.3 is a private address" in internal.content.decode()
    assert not Run.objects.exists()


def test_a_registered_connector_this_lab_cannot_load_is_refused_in_words(
    demo: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(registry._SHIPPED, "pipecat", "lab.connectors.not_installed_here")
    register(demo, "wss://8.8.8.8/ws", connector="pipecat", secret_env="")
    refused = operator_of(demo).post("/runs/", {"scenario": "correction", "agent": "demo/bot"})
    assert refused.status_code == 409
    assert "the &#x27;pipecat&#x27; connector is not available in this lab" in (
        refused.content.decode()
    )
    assert not Run.objects.exists()
