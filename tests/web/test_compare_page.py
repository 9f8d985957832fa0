"""The comparison page: two agents' trials side by side, each cell its pass rate and interval."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import pytest
from django.core.management import call_command
from django.test import Client

from lab.connectors.registry import AgentSpec, register_connector, unregister_connector
from lab.evaluation.noise import Outcome
from lab.events.models import TrialGroup
from lab.reports.comparison import ComparisonReport, comparison_bytes, comparison_resealed
from lab.reports.keys import lab_private_key
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


@pytest.mark.django_db(transaction=True)
def test_the_signed_comparison_report_verifies_and_a_changed_cell_is_caught_even_resigned(
    outsiders: None, capsys: pytest.CaptureFixture[str], fast_clock: object, tmp_path: Path
) -> None:
    with pytest.raises(SystemExit):
        call_command(
            "runscenarios",
            *("--agent", "double:well_behaved", "--versus", "double:keeps_first_offer"),
            *("--as-is", "--scenario", "correction", "--trials", "2"),
        )
    capsys.readouterr()
    owner = Client()
    act_as_owner(owner)
    assert 'id="compare-report"' in owner.get("/compare/").content.decode()
    response = owner.get("/compare/report.json")
    assert response["Content-Disposition"] == 'attachment; filename="comparison.json"'
    good = tmp_path / "comparison.json"
    good.write_bytes(response.content)
    call_command("verifyreport", str(good))
    out = capsys.readouterr().out
    assert f"{good}: consistent, signed by this lab; 2 cells re-derived" in out

    report = ComparisonReport.model_validate_json(response.content)
    failing = next(c for c in report.columns if c.cells[0].passed == 0)
    changed = failing.cells[0].model_copy(
        update={"passed": 2, "outcomes": [Outcome.PASS] * 2, "low": 0.3424, "high": 1.0}
    )
    columns = [
        c.model_copy(update={"cells": [changed]}) if c is failing else c for c in report.columns
    ]
    # Signed anew by the lab itself: only re-deriving the cell from the events can catch it.
    forged = comparison_resealed(
        report.model_copy(update={"columns": columns}), key=lab_private_key()
    )
    bad = tmp_path / "forged.json"
    bad.write_bytes(comparison_bytes(forged))
    with pytest.raises(SystemExit):
        call_command("verifyreport", str(bad))
    out = capsys.readouterr().out
    assert "the table states 2/2 [0.3424, 1.0] flips 0.0; the trials' events derive 0/2" in out
    assert f"{bad}: INCONSISTENT (1 problems)" in out
