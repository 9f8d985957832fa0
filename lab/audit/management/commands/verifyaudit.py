"""`manage.py verifyaudit [--tenant T]…`: walk each tenant's audit hash chain; exit 1 if broken."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.accounts.models import Tenant
from lab.audit.chain_store import chain_verify, chained_tenants


class Command(BaseCommand):
    help = (
        "Check every audit row of the tenants (all by default) against its tenant's hash chain "
        "and name the first changed, missing or inserted row. Exit 0 intact, 1 otherwise."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--tenant", action="append", default=[], help="a tenant's slug (repeatable)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenants = options["tenant"] or chained_tenants()
        failed = []
        for tenant in tenants:
            report = chain_verify(tenant)
            if report.broken is None and report.rows == 0 and not _known(tenant):
                failed.append(tenant)
                self.stdout.write(f"{tenant}: no such tenant and no audit rows")
            elif report.broken is None:
                self.stdout.write(
                    f"{tenant}: intact, {report.rows} row(s), head {report.head_hash}"
                )
            else:
                failed.append(tenant)
                self.stdout.write(
                    f"{tenant}: BROKEN after {report.rows} intact row(s): {report.broken.reason}"
                )
        if failed:
            raise CommandError(f"audit chain not intact for {', '.join(failed)}", returncode=1)


def _known(tenant: str) -> bool:
    return Tenant.objects.filter(slug=tenant).exists()
