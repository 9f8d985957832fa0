"""The tenant rollup read from the audit rows: grouped counts in SQL, folded by lab.api.rollup_fold.

Portable SQL only (SQLite and PostgreSQL): one GROUP BY per UTC day over the index
audit_tenant_graded (tenant, graded_at, agent, verdict, grounding_verdict), which covers the query,
so no table row is read; the triage list walks audit_tenant_flagged newest first. The cost grows
with the turns in the window (docs/benchmarks.md).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db import connection

from lab.api.rollup_fold import CountRow, day_window, fold
from lab.api.schemas import Rollup, TriageTurn
from lab.audit.models import AuditRecord
from lab.grading.grounding import GroundingVerdict
from lab.grading.schema import Category, Severity, Verdict

_GROUPED = ("agent", "verdict", "grounding_verdict")


def queue_url(tenant: str) -> str:
    """The tenant's operator queue (lab.operator), where a flag is acted on."""
    return f"/t/{tenant}/queue/"


def tenant_rollup(tenant: str, *, days: int, triage_limit: int, today: date) -> Rollup:
    """Totals, per agent and per day over the `days` UTC days through today, and the triage list."""
    window = day_window(today, days)
    folded = fold(_counts(tenant, window), window)
    return Rollup(
        tenant=tenant,
        days=days,
        since=window[0],
        until=window[-1],
        totals=folded.totals,
        agents=folded.agents,
        trend=folded.trend,
        triage=triage(tenant, limit=triage_limit),
        queue_url=queue_url(tenant),
    )


def _counts(tenant: str, window: list[date]) -> list[CountRow]:
    # One statement, a GROUP BY per UTC day joined by UNION ALL: a range per day keeps the
    # covering index usable, and SQLite has no native date truncation (Django's runs a Python
    # function for every row). Plain SQL, the same on SQLite and PostgreSQL.
    quote = connection.ops.quote_name
    column = {f.name: quote(f.column or f.name) for f in AuditRecord._meta.concrete_fields}
    grouped = ", ".join(column[f] for f in _GROUPED)
    table = quote(AuditRecord._meta.db_table)
    part = (
        f"SELECT CAST(%s AS INTEGER), {grouped}, COUNT(*) FROM {table} "
        f"WHERE {column['tenant']} = %s AND {column['graded_at']} >= %s "
        f"AND {column['graded_at']} < %s GROUP BY {grouped}"
    )
    params: list[Any] = []
    for index, day in enumerate(window):
        start = datetime.combine(day, time.min, tzinfo=UTC)
        bounds = (start, start + timedelta(days=1))
        params += [index, tenant, *map(connection.ops.adapt_datetimefield_value, bounds)]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join([part] * len(window)), params)
        found = cursor.fetchall()
    return [
        CountRow(
            day=window[index],
            agent=agent,
            verdict=Verdict(verdict),
            grounding=GroundingVerdict(grounding),
            turns=turns,
        )
        for index, agent, verdict, grounding, turns in found
    ]


def triage(tenant: str, *, limit: int) -> list[TriageTurn]:
    """The tenant's newest flagged turns, newest first."""
    records = (
        AuditRecord.objects.filter(tenant=tenant, flagged=True)
        .order_by("-id")
        .only(
            "id",
            "agent",
            "call_id",
            "turn_id",
            "verdict",
            "grounding_verdict",
            "severity",
            "category",
            "grade",
            "utterance",
            "graded_at",
        )[:limit]
    )
    return [
        TriageTurn(
            audit_row_ref=record.ref,
            id=record.id,
            agent=record.agent,
            call_id=record.call_id,
            turn_id=record.turn_id,
            verdict=Verdict(record.verdict),
            grounding_verdict=GroundingVerdict(record.grounding_verdict),
            severity=Severity(record.severity),
            category=Category(record.category) if record.category else None,
            claim=record.grade.get("claim"),
            utterance=record.utterance,
            graded_at=record.graded_at,
        )
        for record in records
    ]
