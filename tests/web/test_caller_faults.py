"""The caller's own failures counted apart on every surface: a trial that did not pass after the
scripted caller answered the agent from the default persona (its scenario gives none)."""

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

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def persona_trials(capsys: pytest.CaptureFixture[str], fast_clock: object) -> Iterator[str]:
    """Two trials each of an agent that asks a phone number (answered from the default persona)
    and then never books, and of one that books again on "Yes, confirm." (a contradiction, the
    agent's own whatever the caller said)."""

    def connect(spec: AgentSpec) -> Outsider:
        assert spec.endpoint in get_args(Habit)
        return Outsider(spec.endpoint)  # type: ignore[arg-type]

    register_connector("double", connect)
    try:
        with pytest.raises(SystemExit):
            call_command(
                "runscenarios",
                *("--agent", "double:number_not_on_file", "--model", "asks"),
                *("--versus", "double:well_behaved", "--versus-model", "plain"),
                *("--as-is", "--scenario", "double_confirmation", "--trials", "2"),
            )
        yield capsys.readouterr().out
    finally:
        unregister_connector("double")


def test_persona_answers_are_caller_faults_in_the_trials_table_and_the_comparison(
    persona_trials: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The command line: the asking agent's two trials judge no agent; the other's are its own.
    assert "pass_rate=0/0 (n/a, 95% CI [0%, 100%]) flip_rate=0.00 caller_faults=2" in persona_trials
    assert "pass_rate=0/2 (0%, 95% CI [0%, 66%]) flip_rate=0.00\n" in persona_trials
    asking, plain = TrialGroup.objects.order_by("created_at")
    owner = Client()
    act_as_owner(owner)
    # The trials table sets them apart under the interval.
    trials = owner.get(f"/trials/{asking.id}/").content.decode()
    assert "2 caller faults set apart" in trials
    assert "caller fault" not in owner.get(f"/trials/{plain.id}/").content.decode()
    # The comparison cell says so too, and only in the asking agent's column.
    compare = owner.get("/compare/").content.decode()
    assert compare.count("2 caller faults") == 1
    rates = re.findall(r'<td class="compare-cell" data-rate="([^"]+)"', compare)
    assert sorted(rates) == ["0/0", "0/2"]
    # The signed report states the caller outcomes, re-derived from each trial's events.
    raw = owner.get("/compare/report.json").content
    report = ComparisonReport.model_validate_json(raw)
    cells = {column.model: column.cells[0] for column in report.columns}
    assert cells["asks"].outcomes == [Outcome.CALLER] * 2 and cells["asks"].judged == 0
    assert cells["plain"].outcomes == [Outcome.FAIL] * 2 and cells["plain"].judged == 2
    good = tmp_path / "comparison.json"
    good.write_bytes(raw)
    call_command("verifyreport", str(good))
    assert "consistent, signed by this lab; 2 cells re-derived" in capsys.readouterr().out
    # Blaming the agent for the caller's failures is a changed cell, caught even re-signed.
    asking_column = next(c for c in report.columns if c.model == "asks")
    blamed = asking_column.cells[0].model_copy(
        update={"outcomes": [Outcome.FAIL] * 2, "judged": 2, "low": 0.0, "high": 0.6576}
    )
    columns = [
        c.model_copy(update={"cells": [blamed]}) if c is asking_column else c
        for c in report.columns
    ]
    forged = comparison_resealed(
        report.model_copy(update={"columns": columns}), key=lab_private_key()
    )
    bad = tmp_path / "blamed.json"
    bad.write_bytes(comparison_bytes(forged))
    with pytest.raises(SystemExit):
        call_command("verifyreport", str(bad))
    assert "the trials' events derive 0/0" in capsys.readouterr().out
