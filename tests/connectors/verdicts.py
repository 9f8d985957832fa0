"""Each scenario's verdict as `runscenarios` prints it, for the connector tests, and the modes and
template folders those tests play."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command


def scenario_verdicts(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, str], str]:
    """Run `runscenarios` with these arguments: each scenario's verdict from its stdout, and
    its stderr (the reasons). A FAIL exits 1; any other exit is the test's failure."""
    capsys.readouterr()
    try:
        call_command("runscenarios", *args)
    except SystemExit as exit_info:
        assert exit_info.code == 1
    captured = capsys.readouterr()
    found = dict(line.split()[:2] for line in captured.out.splitlines() if line.strip())
    return found, captured.err


# A habit's two modes, as runscenarios' arguments.
MODES = {"guarded": (), "as-is": ("--as-is",)}


def templates_written(out: Path, tools: str) -> Path:
    """The five scenarios maketemplates writes into out for a tools file, unedited."""
    call_command("maketemplates", "--tools", tools, "--out", str(out), "--force")
    return out
