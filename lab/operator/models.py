"""The flag queue's rows: one case per flagged audit record, its actions, and the candidate
constraints operators propose when they override a flag."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from lab.accounts.roles import Role
from lab.audit.models import AuditRecord, audit_ref
from lab.operator.states import Action, CaseState

STATE_CHOICES = [(s.value, s.value) for s in CaseState]
ROLE_CHOICES = [(r.value, r.value) for r in Role]


class FlagCase(models.Model):
    """A flagged turn in the queue; `version` grows with every accepted action."""

    # The database never lets a record go (lab.audit.write_once); were it let go, a case nobody
    # acted on would go with it, while one someone acted on protects it by its actions.
    record = models.OneToOneField(AuditRecord, on_delete=models.CASCADE, related_name="case")
    # Copies of the record's slugs, for the queue's filters without a join.
    tenant = models.CharField(max_length=64)
    agent = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=STATE_CHOICES, default=CaseState.OPEN.value)
    version = models.PositiveIntegerField(default=0)
    # Where an escalation sent the case: a member, or everyone with a role.
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assigned_cases",
    )
    assignee_role = models.CharField(max_length=16, choices=ROLE_CHOICES, blank=True)
    opened_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "-record"], name="case_tenant_newest"),
            models.Index(fields=["tenant", "state", "-record"], name="case_tenant_state"),
        ]

    def __str__(self) -> str:
        return f"case {self.id} of {audit_ref(self.record_id)} ({self.state})"


class CaseAction(models.Model):
    """One accepted operator action: who, when, from which state to which. Never changed."""

    case = models.ForeignKey(FlagCase, on_delete=models.PROTECT, related_name="actions")
    # Entries are never changed (a database trigger refuses it), so someone who acted cannot be
    # deleted: deactivate the account instead. The name is copied for reading the entry alone.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    actor_name = models.CharField(max_length=150)
    action = models.CharField(max_length=16, choices=[(a.value, a.value) for a in Action])
    from_state = models.CharField(max_length=16, choices=STATE_CHOICES)
    to_state = models.CharField(max_length=16, choices=STATE_CHOICES)
    note = models.TextField(blank=True)
    # "user:<username>" or "role:<role>" for an escalation, empty otherwise.
    escalated_to = models.CharField(max_length=200, blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.actor_name} {self.action} case {self.case_id}"


class ConstraintCandidate(models.Model):
    """An override's note, proposed as an addition to the tenant's constraint list."""

    tenant = models.CharField(max_length=64)
    record = models.ForeignKey(AuditRecord, on_delete=models.PROTECT, related_name="+")
    action = models.OneToOneField(CaseAction, on_delete=models.PROTECT, related_name="candidate")
    # The claim the grader could not ground, and the list version it was checked against.
    claim = models.TextField(blank=True)
    constraint_list_version = models.CharField(max_length=64)
    note = models.TextField()
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    proposed_by_name = models.CharField(max_length=150)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["tenant", "-id"], name="candidate_tenant_newest")]

    def __str__(self) -> str:
        return f"candidate {self.id} for {self.tenant}: {self.note[:40]}"
