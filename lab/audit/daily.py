"""The per-day counters the tenant rollup reads: audit rows by tenant, UTC day, agent and grade.

Derived data: the audit rows stay the source of truth. New rows are counted in the transaction
that stores them (one upsert per batch); rebuild() recounts every row, for the migration that
adds the table and for `manage.py rebuild_audit_days`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, DateField
from django.db.models.functions import Cast

from lab.audit.models import AuditDay, AuditRecord

# (tenant, day, agent, verdict, grounding verdict, flagged): one counter row.
Key = tuple[str, date, str, str, str, bool]
KEY_FIELDS = ("tenant", "day", "agent", "verdict", "grounding_verdict", "flagged")
# Counter rows per upsert: 7 parameters each, well under every backend's limit.
_UPSERT_BATCH = 500


def utc_day(moment: datetime) -> date:
    """The UTC date of a timestamp (a naive one is UTC already, as Django stores it)."""
    return moment.astimezone(UTC).date() if moment.tzinfo else moment.date()


def count_new(records: Sequence[AuditRecord]) -> None:
    """Add rows just stored to their days' counters, in the transaction that stores them."""
    tally = Counter(
        (r.tenant, utc_day(r.graded_at), r.agent, r.verdict, r.grounding_verdict, r.flagged)
        for r in records
    )
    # Sorted, so two writers lock shared counter rows in the same order (no deadlock).
    groups = sorted(tally.items())
    for start in range(0, len(groups), _UPSERT_BATCH):
        _upsert(groups[start : start + _UPSERT_BATCH])


def _upsert(groups: list[tuple[Key, int]]) -> None:
    # Django's bulk_create(update_conflicts=True) can only overwrite a column, not add to it;
    # INSERT ... ON CONFLICT DO UPDATE is the same SQL on SQLite and PostgreSQL.
    quote = connection.ops.quote_name
    table = quote(AuditDay._meta.db_table)
    key = ", ".join(quote(name) for name in KEY_FIELDS)
    turns = quote("turns")
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(groups))
    params: list[Any] = []
    for (tenant, day, agent, verdict, grounding, flagged), count in groups:
        day_value = connection.ops.adapt_datefield_value(day)
        params += [tenant, day_value, agent, verdict, grounding, flagged, count]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({key}, {turns}) VALUES {values} "
            f"ON CONFLICT ({key}) DO UPDATE SET {turns} = {table}.{turns} + EXCLUDED.{turns}",
            params,
        )


def counted(records: type[AuditRecord] = AuditRecord) -> Iterator[tuple[Key, int]]:
    """Every row counted afresh in one GROUP BY: what the counters must hold."""
    # Django keeps the connection in UTC (USE_TZ), so a plain cast is the UTC date, in SQL on
    # both backends; TruncDate runs a Python function per row on SQLite (ten times slower).
    grouped = (
        records.objects.order_by()
        .annotate(day=Cast("graded_at", DateField()))
        .values_list(*KEY_FIELDS)
        .annotate(turns=Count("id"))
    )
    for tenant, day, agent, verdict, grounding, flagged, turns in grouped:
        yield (tenant, day, agent, verdict, grounding, flagged), turns


def rebuild(records: type[AuditRecord] = AuditRecord, days: type[AuditDay] = AuditDay) -> int:
    """Replace every counter by a fresh count of the rows; returns the counter rows written."""
    with transaction.atomic():
        days.objects.all().delete()
        created = days.objects.bulk_create(
            (
                days(**dict(zip(KEY_FIELDS, key, strict=True)), turns=turns)
                for key, turns in counted(records)
            ),
            batch_size=_UPSERT_BATCH,
        )
    return len(created)
