"""A registered agent's own tools file: checked at save (page and command), shown again to edit,
and carried into every run of the agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from lab.accounts.agents import AgentRef
from lab.accounts.models import Agent, Membership, Tenant
from lab.events.types import Action

pytestmark = pytest.mark.django_db
PAGE = "/t/demo/agents/"
TOOLS = {
    "business": "Clinic",
    "tools": [
        {"name": "list_openings", "properties": {"date": {"type": "string"}}},
        {"name": "schedule_visit", "properties": {"opening_ref": {"type": "string"}}},
    ],
    "meanings": {"schedule_visit": {"args": {"opening_ref": "option_id"}}},
}
FORM = {"slug": "clinic", "connector": "openai", "endpoint": "https://8.8.8.8/v1"}


@pytest.fixture
def owner() -> Client:
    tenant = Tenant.objects.create(slug="demo")
    user = User.objects.create_user("owner-demo")
    Membership.objects.create(user=user, tenant=tenant, role="owner")
    client = Client()
    client.force_login(user)
    return client


def test_a_tools_file_saved_on_the_page_reaches_the_agents_runs(owner: Client) -> None:
    assert owner.post(PAGE, {**FORM, "tools": json.dumps(TOOLS)}).status_code == 302
    agent = Agent.objects.get()
    assert agent.tools is not None and agent.tools["business"] == "Clinic"
    spec = AgentRef.of(agent).spec()
    assert spec is not None and spec.toolset is not None
    assert spec.toolset.actions == frozenset({Action.BOOK})
    assert "its own tools (2)" in owner.get(PAGE).content.decode()
    edit = owner.get(f"{PAGE}clinic/").content.decode()
    assert "schedule_visit" in edit and "opening_ref" in edit
    # Saving without a file goes back to the lab's own tools.
    assert owner.post(f"{PAGE}clinic/", {**FORM, "tools": ""}).status_code == 302
    assert Agent.objects.get().tools is None


def test_a_bad_tools_file_is_refused_naming_the_field_and_kept_to_fix(owner: Client) -> None:
    bad = {**TOOLS, "meanings": {"schedule_visit": {"args": {"ref": "option_id"}}}}
    answer = owner.post(PAGE, {**FORM, "tools": json.dumps(bad)})
    assert answer.status_code == 400 and not Agent.objects.exists()
    page = answer.content.decode()
    assert "schedule_visit has no argument" in page and "&quot;ref&quot;" in page
    scripted = owner.post(
        PAGE, {"slug": "own", "connector": "scripted", "tools": json.dumps(TOOLS)}
    )
    assert scripted.status_code == 400
    assert "the scripted agent uses the lab&#x27;s own tools" in scripted.content.decode()


def test_registeragent_takes_a_tools_file_and_refuses_a_bad_one(tmp_path: Path) -> None:
    Tenant.objects.create(slug="demo")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    url = ("--connector", "openai", "--url", "https://8.8.8.8/v1")
    call_command("registeragent", "demo", "clinic", *url, "--tools", str(tools))
    assert Agent.objects.get().tools["tools"][0]["name"] == "list_openings"
    tools.write_text("{not json")
    with pytest.raises(CommandError, match="tools: tools file: the file: Invalid JSON"):
        call_command("registeragent", "demo", "clinic", *url, "--tools", str(tools))
