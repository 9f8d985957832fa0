"""The tenant rollup: the per-day counters (lab.audit.daily) folded by lab.api.rollup_fold.

Totals, agents and trend read a few counter rows per day, whatever the turns in the window; the
triage list walks the index audit_tenant_flagged newest first (docs/benchmarks.md).
"""

from __future__ import annotations

from datetime import date

from lab.api.rollup_fold import CountRow, day_window, fold
from lab.api.schemas import Rollup, TriageTurn
from lab.audit.models import AuditDay, AuditRecord
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


def _counts(tenant: str, window: list[date]) -> list[CountRow]:
    found = AuditDay.objects.filter(
        tenant=tenant, day__gte=window[0], day__lte=window[-1]
    ).values_list("day", "agent", "verdict", "grounding_verdict", "flagged", "turns")
    return [
        CountRow(
            day=day,
            agent=agent,
            verdict=Verdict(verdict),
            grounding=GroundingVerdict(grounding),
            turns=turns,
            flagged=flagged,
        )
        for day, agent, verdict, grounding, flagged, turns in found
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
