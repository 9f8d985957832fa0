"""Reading audit records: newest first per agent or tenant (cursor on the id), a call in order."""

from __future__ import annotations

from django.db.models import QuerySet

from lab.audit.models import AuditRecord
from lab.audit.schema import AuditChannel, AuditEntry, AuditRecordOut
from lab.grading.grounding import GroundingAudit
from lab.grading.schema import TurnGrade
from lab.retrieval.window import RetrievalWindow

MAX_LIMIT = 200


def audit_records_for_agent(
    *, tenant: str, agent: str, limit: int = 50, before: int | None = None
) -> list[AuditRecord]:
    """An agent's records, newest first; `before` is the id of the last record already seen."""
    return _page(AuditRecord.objects.filter(tenant=tenant, agent=agent), limit, before)


def audit_records_for_tenant(
    *, tenant: str, limit: int = 50, before: int | None = None
) -> list[AuditRecord]:
    """Every agent's records of a tenant, newest first."""
    return _page(AuditRecord.objects.filter(tenant=tenant), limit, before)


def audit_records_for_call(*, tenant: str, call_id: str) -> QuerySet[AuditRecord]:
    """One call's records in the order they were written (the order of its turns)."""
    return AuditRecord.objects.filter(tenant=tenant, call_id=call_id).order_by("id")


def audit_entry(record: AuditRecord) -> AuditEntry:
    """The entry a record was written from."""
    return AuditEntry(
        tenant=record.tenant,
        agent=record.agent,
        call_id=record.call_id,
        run_id=record.run_id,
        turn_id=record.turn_id,
        channel=AuditChannel(record.channel),
        utterance=record.utterance,
        caller_turn=record.caller_turn or None,
        grade=TurnGrade.model_validate(record.grade),
        grounding=GroundingAudit.model_validate(record.grounding),
        retrieval=(
            None if record.retrieval is None else RetrievalWindow.model_validate(record.retrieval)
        ),
        constraint_list_version=record.constraint_list_version,
        constraint_list_digest=record.constraint_list_digest,
        knowledge_base_version=record.knowledge_base_version or None,
        grade_latency_ms=record.grade_latency_ms,
        turn_latency_ms=record.turn_latency_ms,
        spoken_at=record.spoken_at,
        graded_at=record.graded_at,
    )


def audit_record_out(record: AuditRecord) -> AuditRecordOut:
    """A record as `--out` and the APIs write it: its identity, then the entry."""
    return AuditRecordOut(
        id=record.id,
        ref=record.ref,
        flagged=record.flagged,
        recorded_at=record.recorded_at,
        corrects=record.corrects_id,
        entry=audit_entry(record),
    )


def _page(records: QuerySet[AuditRecord], limit: int, before: int | None) -> list[AuditRecord]:
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if before is not None:
        records = records.filter(id__lt=before)
    return list(records.order_by("-id")[:limit])
