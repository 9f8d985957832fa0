"""Sandbox rows: each run gets its own calendar and ledger, loaded from fixtures/."""

from __future__ import annotations

from django.db import models

from lab.events.models import Run


class CalendarSlot(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="slots")
    slot_id = models.CharField(max_length=32)
    day = models.CharField(max_length=16)
    time = models.CharField(max_length=5)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "slot_id"], name="slot_unique_per_run")
        ]

    def __str__(self) -> str:
        return self.slot_id


class Appointment(models.Model):
    """A booking; the sandbox does not cap a slot, so duplicate executions stay visible."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="appointments")
    slot = models.ForeignKey(CalendarSlot, on_delete=models.CASCADE)
    execution_id = models.CharField(max_length=36, unique=True)

    def __str__(self) -> str:
        return f"{self.slot} ({self.execution_id})"


class LedgerOrder(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="orders")
    order_number = models.CharField(max_length=16)
    paid_cents = models.PositiveIntegerField()
    refunded_cents = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "order_number"], name="order_unique_per_run")
        ]

    def __str__(self) -> str:
        return self.order_number


class ToolExecution(models.Model):
    """The fate of one idempotency key: an executed write, or (voided) one that never may run.

    The unique key makes execution once-only across processes; reconciliation voids a key it
    found unexecuted, so a write still in flight somewhere cannot contradict the log later.
    """

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="executions")
    idempotency_key = models.CharField(max_length=80, unique=True)
    adapter = models.CharField(max_length=32)
    action = models.CharField(max_length=16)
    args = models.JSONField()
    args_hash = models.CharField(max_length=64)
    execution_id = models.CharField(max_length=36, unique=True)
    receipt_id = models.CharField(max_length=16, unique=True)
    authorized_by = models.CharField(max_length=16, blank=True, default="")
    voided = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.receipt_id
