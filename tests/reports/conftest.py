from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import override_settings

from lab.audit.models import AuditChainHead, AuditRecord
from lab.events.types import Channel, Mode
from lab.reports.export import report_bytes
from lab.reports.services import report_for_run
from lab.runs.services import run_start
from lab.scenarios.catalog import all_contracts
from lab.web.management.headless import play_headless
from tests.audit.lifting import lifted
from tests.conftest import FAST_CLOCK


@dataclass(frozen=True)
class RealReport:
    """A report written by the lab for a run the scripted caller really played."""

    scenario_id: str
    mode: Mode
    raw: bytes

    def document(self) -> dict[str, Any]:
        """A fresh, mutable copy of the report's JSON."""
        return json.loads(self.raw)


@pytest.fixture(scope="session", autouse=True)
def lab_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This lab instance's state (its signing key) in a temporary folder, never in $HOME."""
    state = tmp_path_factory.mktemp("lab-state")
    with override_settings(LAB_STATE_DIR=state):
        yield state


def _played(scenario_id: str, mode: Mode) -> RealReport:
    run = run_start(scenario_id=scenario_id, mode=mode, channel=Channel.TYPED)
    asyncio.run(play_headless(run))
    report = RealReport(scenario_id, mode, report_bytes(report_for_run(run)))
    # This fixture outlives every test's transaction: leave nothing behind for tests that count
    # rows. Audit rows protect their run, so they go first, and only with the write-once
    # triggers lifted; the chain goes with them.
    with lifted(connection):
        AuditRecord.objects.filter(run=run).delete()
        AuditChainHead.objects.all().delete()
    run.delete()
    return report


@pytest.fixture(scope="session")
def real_reports(
    lab_state, django_db_setup, django_db_blocker
) -> dict[tuple[str, Mode], RealReport]:
    """Every scenario played guarded and unguarded through the WebSocket path, then reported."""
    # pytest-django creates the test database only when a collected test is marked django_db,
    # so modules using this carry the mark; without it the runs would reach the dev database.
    with django_db_blocker.unblock(), override_settings(**FAST_CLOCK):
        name = str(connection.settings_dict["NAME"])
        if not (name.startswith("test_") or "memorydb" in name):
            pytest.fail(f"real_reports needs the test database, not {name}: mark it django_db")
        return {
            (scenario_id, mode): _played(scenario_id, mode)
            for scenario_id in sorted(all_contracts())
            for mode in Mode
        }


@pytest.fixture(scope="session")
def guarded(real_reports) -> RealReport:
    """The correction scenario's guarded run: it PASSes and holds a correction and a commit."""
    return real_reports[("correction", Mode.GUARDED)]
