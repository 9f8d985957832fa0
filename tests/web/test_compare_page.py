"""The comparison page: two agents' trials side by side, each cell its pass rate and interval."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import get_args

import pytest
from django.core.management import call_command
from django.test import Client

from lab.connectors.registry import AgentSpec, register_connector, unregister_connector
from lab.events.models import TrialGroup
from tests.connectors.outsiders import Habit, Outsider
from tests.web.owners import act_as_owner


@pytest.fixture
def outsiders() -> Iterator[None]:
    def connect(spec: AgentSpec) -> Outsider:
        assert spec.endpoint in get_args(Habit)
        return Outsider(spec.endpoint)  # type: ignore[arg-type]

    register_connector("double", connect)
    yield
    unregister_connector("double")


@pytest.mark.django_db(transaction=True)
def test_two_agents_trials_stand_side_by_side_with_rates_intervals_and_first_failures(
    outsiders: None, capsys: pytest.CaptureFixture[str], fast_clock: object
) -> None:
    with pytest.raises(SystemExit):
        call_command(
            "runscenarios",
            *("--agent", "double:well_behaved", "--model", "good"),
            *("--versus", "double:keeps_first_offer", "--versus-model", "stale"),
            *("--as-is", "--scenario", "correction", "--trials", "2"),
        )
    capsys.readouterr()
    first, second = TrialGroup.objects.order_by("created_at")
    owner = Client()
    act_as_owner(owner)
    html = owner.get("/compare/").content.decode()
    heads = re.findall(r'class="agent-head" data-group="([^"]+)"', html)
    assert set(heads) == {str(first.id), str(second.id)}
    assert "model <code>good</code>" in html and "model <code>stale</code>" in html
    rates = re.findall(r'<td class="compare-cell" data-rate="([^"]+)"', html)
    assert sorted(rates) == ["0/2", "2/2"]
    assert "[34%, 100%]" in html and "[0%, 66%]" in html
    assert "<strong>old_proposal_expired</strong> contradicted" in html
    assert f'href="/trials/{first.id}/"' in html
    chosen = owner.get(f"/compare/?group={second.id}").content.decode()
    assert re.findall(r'class="agent-head" data-group="([^"]+)"', chosen) == [str(second.id)]
    guarded = owner.get("/compare/?mode=guarded").content.decode()
    assert 'id="no-comparison"' in guarded and "with these filters" in guarded
    assert owner.get("/compare/?channel=fax").status_code == 400


@pytest.mark.django_db
def test_someone_else_sees_no_agents_to_compare(client: Client) -> None:
    html = client.get("/compare/").content.decode()
    assert 'id="no-comparison"' in html
