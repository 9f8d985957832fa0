"""manage.py registeragent registers a tenant's agent under the agents page's rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from lab.accounts.models import Agent
from lab.accounts.services import demo_seed
from lab.alerts.targets import parse_allowed_hosts

pytestmark = pytest.mark.django_db
URL = "http://127.0.0.1:8001/v1"


def _register(*extra: str) -> None:
    call_command(
        "registeragent", "demo", "reference", "--connector", "openai", "--url", URL, *extra
    )


def test_it_refuses_a_loopback_url_the_allow_list_does_not_name(tmp_path: Path) -> None:
    demo_seed(saved=tmp_path / "demo-login")
    with pytest.raises(CommandError, match="endpoint"):
        _register()
    assert not Agent.objects.filter(slug="reference").exists()


@override_settings(LAB_OUTBOUND_ALLOWED_HOSTS=parse_allowed_hosts("127.0.0.1:8001"))
def test_it_registers_then_updates_an_agent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    demo_seed(saved=tmp_path / "demo-login")
    _register("--model", "one")
    _register("--model", "two")
    assert capsys.readouterr().out.splitlines() == [
        "agent demo/reference registered",
        "agent demo/reference updated",
    ]
    assert Agent.objects.get(tenant__slug="demo", slug="reference").model == "two"
