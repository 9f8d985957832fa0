"""`python -m tests.alerts.seeding`: tenant demo and one stored critical flag, in the database
DATABASE_URL names; prints when the write of the row (and so of its alert) began, as JSON."""

from __future__ import annotations

import json
import os
import time

import django


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
    django.setup()
    from lab.accounts.models import Tenant
    from lab.audit.services import audit_record
    from tests.alerts.support import critical_entries

    Tenant.objects.get_or_create(slug="demo")
    entry = critical_entries()[0]
    writing_at = time.time()
    record = audit_record(entry=entry)
    print(json.dumps({"record": record.id, "writing_at": writing_at}))


if __name__ == "__main__":
    main()
