"""Headless commands on a database nobody migrated say what to run first, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_runscenarios_on_an_unmigrated_database_says_what_to_run(tmp_path: Path) -> None:
    env = os.environ | {"DATABASE_URL": f"sqlite:///{tmp_path / 'empty.sqlite3'}"}
    result = subprocess.run(
        [sys.executable, "manage.py", "runscenarios", "--scenario", "correction"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "not set up" in result.stderr
    assert "migrate" in result.stderr
