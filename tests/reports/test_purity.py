from __future__ import annotations

import subprocess
import sys

from django.conf import settings

PURE = [
    "lab.reports.canonical",
    "lab.reports.export",
    "lab.reports.findings",
    "lab.reports.integrity",
    "lab.reports.origin",
    "lab.reports.results",
    "lab.reports.schema",
    "lab.reports.signing",
    "lab.reports.structure",
    "lab.reports.tools",
    "lab.reports.verification",
]


def test_the_verification_core_imports_nothing_from_django():
    script = f"import sys; import {', '.join(PURE)}; print('django' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "False"
