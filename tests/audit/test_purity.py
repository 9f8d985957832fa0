from __future__ import annotations

import subprocess
import sys

from django.conf import settings

PURE = ["lab.audit.schema", "lab.audit.transcript", "lab.audit.imported", "lab.audit.chain"]


def test_the_audit_entry_transcript_and_grading_cores_import_nothing_from_django():
    script = f"import sys; import {', '.join(PURE)}; print('django' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "False"
