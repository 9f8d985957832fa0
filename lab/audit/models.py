"""Audit records: one row per graded agent turn, written once (the database refuses changes).

The structured parts (grade, grounding, retrieval) are the entry's pydantic models as JSON; the
columns beside them are copies made at write time for the queries the queue and the APIs run.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from lab.audit.schema import AuditChannel
from lab.events.models import Run


def audit_ref(record_id: int) -> str:
    """How the webhook, the APIs and the pages name an audit row."""
    return f"audit_{record_id}"


class AuditRecord(models.Model):
    tenant = models.CharField(max_length=64)
    agent = models.CharField(max_length=64)
    call_id = models.CharField(max_length=128)
    # Imported calls have no run; a run with audit records is kept (compliance reads them later).
    run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.PROTECT, related_name="audit_records"
    )
    turn_id = models.CharField(max_length=128)
    channel = models.CharField(max_length=16, choices=[(c.value, c.value) for c in AuditChannel])
    utterance = models.TextField()
    # An empty string stands for None here, in category and in knowledge_base_version.
    caller_turn = models.TextField(blank=True)
    verdict = models.CharField(max_length=16)
    category = models.CharField(max_length=16, blank=True)
    severity = models.CharField(max_length=8)
    grounding_verdict = models.CharField(max_length=16)
    # Whether the turn belongs in the operator's queue (lab.audit.schema.is_flagged).
    flagged = models.BooleanField()
    grader = models.CharField(max_length=64)
    grader_version = models.CharField(max_length=32)
    constraint_list_version = models.CharField(max_length=64)
    constraint_list_digest = models.CharField(max_length=64)
    knowledge_base_version = models.CharField(max_length=96, blank=True)
    retrieval_confidence = models.FloatField(null=True, blank=True)
    grade = models.JSONField()
    grounding = models.JSONField()
    retrieval = models.JSONField(null=True, blank=True)
    grade_latency_ms = models.FloatField()
    turn_latency_ms = models.FloatField(null=True, blank=True)
    spoken_at = models.DateTimeField(null=True, blank=True)
    graded_at = models.DateTimeField()
    # Set by the writer (not auto_now_add) because the row's chain hash covers it.
    recorded_at = models.DateTimeField(default=timezone.now)
    # SHA-256 of the entry (lab.audit.schema.AuditEntry.content_key): the same turn, graded the
    # same way, is one row however often it is imported or retried.
    content_key = models.CharField(max_length=64, unique=True)
    corrects = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="corrections"
    )
    # The tenant's hash chain (lab.audit.chain): this row's place, the previous row's hash and
    # this row's own. Null only for a row stored outside the lab's write path.
    chain_seq = models.PositiveBigIntegerField(null=True, blank=True)
    prev_hash = models.CharField(max_length=64, blank=True, default="")
    row_hash = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["tenant", "agent", "-id"], name="audit_agent_newest"),
            models.Index(fields=["tenant", "-id"], name="audit_tenant_newest"),
            models.Index(fields=["tenant", "flagged", "-id"], name="audit_tenant_flagged"),
            models.Index(fields=["tenant", "call_id", "turn_id"], name="audit_turn"),
        ]
        constraints = [
            # Also the chain walk's index; two writers cannot both take one place.
            models.UniqueConstraint(fields=["tenant", "chain_seq"], name="audit_chain_place"),
        ]

    def __str__(self) -> str:
        return f"{self.ref} {self.call_id}/{self.turn_id} {self.verdict}"

    @property
    def ref(self) -> str:
        return audit_ref(self.id)


class AuditDay(models.Model):
    """How many audit rows one agent got on one UTC day with this grade (lab.audit.daily).

    Derived data, kept in the transaction that stores the rows and rebuilt from them on demand;
    the tenant rollup reads these few rows instead of the day's turns.
    """

    tenant = models.CharField(max_length=64)
    day = models.DateField()
    agent = models.CharField(max_length=64)
    verdict = models.CharField(max_length=16)
    grounding_verdict = models.CharField(max_length=16)
    flagged = models.BooleanField()
    turns = models.PositiveBigIntegerField()

    class Meta:
        constraints = [
            # Also the rollup's index: a tenant's range of days.
            models.UniqueConstraint(
                fields=["tenant", "day", "agent", "verdict", "grounding_verdict", "flagged"],
                name="audit_day_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tenant}/{self.agent} {self.day} {self.verdict}: {self.turns}"


class AuditChainHead(models.Model):
    """The end of one tenant's audit hash chain (lab.audit.chain): its last seq and hash.

    Every write of the tenant's rows first updates this row, which serializes the writers of
    one tenant (a row lock on PostgreSQL, the write lock on SQLite), so the chain never forks.
    """

    tenant = models.CharField(max_length=64, unique=True)
    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64)

    def __str__(self) -> str:
        return f"{self.tenant}: {self.seq} rows, head {self.hash[:12]}"
