"""Writing audit records: once per entry, never changed; a correction is a new row.

Each new row joins its tenant's hash chain (lab.audit.chain) in the transaction that inserts it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from lab.audit.chain_store import chain_new, heads_locked
from lab.audit.daily import count_new
from lab.audit.landing import flagged_landed
from lab.audit.models import AuditRecord
from lab.audit.schema import AuditEntry
from lab.events.models import Run

# Keys per IN (...) query: well under every backend's limit on query parameters.
_KEY_BATCH = 500


@dataclass(frozen=True)
class Stored:
    """The rows for a batch of entries, in entry order, and how many of them are new."""

    records: list[AuditRecord]
    created: int


def audit_record(
    *, entry: AuditEntry, run: Run | None = None, corrects: AuditRecord | None = None
) -> AuditRecord:
    """Store one agent turn's entry; the same entry again returns the row already stored."""
    record = AuditRecord(**_fields(entry, run=run, corrects=corrects))
    with transaction.atomic():
        # The tenant's writers wait here, so the key checked below cannot be taken meanwhile
        # (the key covers the tenant: no other tenant's writer can store it).
        heads = heads_locked([record.tenant])
        existing = AuditRecord.objects.filter(content_key=record.content_key).first()
        if existing is not None:
            return existing
        chain_new([record], heads)
        record.save(force_insert=True)
        count_new([record])
        flagged_landed([record])
        return record


def audit_records_store(entries: Sequence[AuditEntry], *, run: Run | None = None) -> Stored:
    """Store a batch (an imported transcript) in one transaction, each entry once."""
    rows = [_fields(entry, run=run, corrects=None) for entry in entries]
    keys = [row["content_key"] for row in rows]
    with transaction.atomic():
        # Every tenant of the batch locked first: what is new is then exactly what this
        # transaction stores, so the day counters count a row once however many writers race.
        heads = heads_locked({row["tenant"] for row in rows})
        before = _by_key(keys)
        new = {row["content_key"]: row for row in rows if row["content_key"] not in before}
        records = [AuditRecord(**row) for row in new.values()]
        chain_new(records, heads)
        AuditRecord.objects.bulk_create(records)
        stored = before | _by_key(list(new))
        count_new([stored[key] for key in new])
        flagged_landed([stored[key] for key in new])
    return Stored(records=[stored[key] for key in keys], created=len(new))


def _by_key(keys: list[str]) -> dict[str, AuditRecord]:
    found: dict[str, AuditRecord] = {}
    for batch in _batches(keys):
        found |= {r.content_key: r for r in AuditRecord.objects.filter(content_key__in=batch)}
    return found


def _batches(keys: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(keys), _KEY_BATCH):
        yield keys[start : start + _KEY_BATCH]


def _fields(entry: AuditEntry, *, run: Run | None, corrects: AuditRecord | None) -> dict[str, Any]:
    if (run.id if run else None) != entry.run_id:
        raise ValueError(f"the entry names run {entry.run_id}, the record {run and run.id}")
    grade, grounding = entry.grade, entry.grounding
    return {
        "tenant": entry.tenant,
        "agent": entry.agent,
        "call_id": entry.call_id,
        "run": run,
        "turn_id": entry.turn_id,
        "channel": entry.channel.value,
        "utterance": entry.utterance,
        "caller_turn": entry.caller_turn or "",
        "verdict": grade.verdict.value,
        "category": grade.category.value if grade.category else "",
        "severity": grade.severity.value,
        "grounding_verdict": grounding.verdict.value,
        "flagged": entry.flagged,
        "grader": grade.grader,
        "grader_version": grade.grader_version,
        "constraint_list_version": entry.constraint_list_version,
        "constraint_list_digest": entry.constraint_list_digest,
        "knowledge_base_version": entry.knowledge_base_version or "",
        "retrieval_confidence": grounding.confidence,
        "grade": grade.model_dump(mode="json"),
        "grounding": grounding.model_dump(mode="json"),
        "retrieval": entry.retrieval.model_dump(mode="json") if entry.retrieval else None,
        "grade_latency_ms": entry.grade_latency_ms,
        "turn_latency_ms": entry.turn_latency_ms,
        "spoken_at": entry.spoken_at,
        "graded_at": entry.graded_at,
        "recorded_at": timezone.now(),
        "content_key": entry.content_key(corrects=corrects.id if corrects else None),
        "corrects": corrects,
    }
