"""The tenant rollup read from the audit rows: grouped counts in SQL, folded by lab.api.rollup_fold.

Portable SQL only (SQLite and PostgreSQL): one GROUP BY per UTC day over the index
audit_tenant_graded (tenant, graded_at, agent, verdict, grounding_verdict), which covers the query,
so no table row is read; the triage list walks audit_tenant_flagged newest first.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Count

from lab.api.rollup_fold import CountRow, day_window, fold
from lab.api.schemas import Rollup, TriageTurn
from lab.audit.models import AuditRecord
from lab.grading.grounding import GroundingVerdict
from lab.grading.schema import Category, Severity, Verdict


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


def _counts(tenant: str, window: list[date]) -> Iterator[CountRow]:
    # A range per day rather than a date function per row: SQLite has no native date truncation
    # (Django's runs a Python function for every row), and ranges keep the index usable.
    for day in window:
        start = datetime.combine(day, time.min, tzinfo=UTC)
        grouped = (
            AuditRecord.objects.filter(
                tenant=tenant, graded_at__gte=start, graded_at__lt=start + timedelta(days=1)
            )
            .order_by()
            .values_list("agent", "verdict", "grounding_verdict")
            .annotate(turns=Count("*"))
        )
        for agent, verdict, grounding, turns in grouped:
            yield CountRow(
                day=day,
                agent=agent,
                verdict=Verdict(verdict),
                grounding=GroundingVerdict(grounding),
                turns=turns,
            )


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
            audit_row_ref=f"audit_{record.id}",
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
