"""Webhook endpoints, the outbox of alerts to send, and every attempt to send one.

An outbox message is written in the audit row's transaction, so a flag that is stored has its
alert stored too; the worker (lab.alerts.delivery) sends it and only then marks it delivered.
"""

from __future__ import annotations

import uuid

from django.db import models

from lab.audit.models import AuditRecord


class WebhookEndpoint(models.Model):
    # A slug like the audit rows' tenant, so endpoints and rows outlive edits to the tenant.
    tenant = models.CharField(max_length=64)
    url = models.URLField(max_length=500)
    # The HMAC key the receiver verifies with; shown to the tenant's owner and admins.
    secret = models.CharField(max_length=100)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["tenant", "active"], name="alert_endpoint_tenant")]

    def __str__(self) -> str:
        return f"{self.tenant} → {self.url}"


class MessageState(models.TextChoices):
    PENDING = "pending"
    DELIVERED = "delivered"
    DEAD = "dead"


class OutboxMessage(models.Model):
    # The idempotency key: sent as X-Lab-Event-Id, the same on every retry.
    event_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.PROTECT, related_name="messages")
    record = models.ForeignKey(AuditRecord, on_delete=models.PROTECT, related_name="alerts")
    # The AlertPayload as JSON; the body bytes are rendered from it through the model.
    payload = models.JSONField()
    state = models.CharField(
        max_length=16, choices=MessageState.choices, default=MessageState.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    # The claim: a worker holds the message until then; a dead worker's claim lapses.
    claimed_by = models.CharField(max_length=64, blank=True)
    claimed_until = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            # One alert per flagged row and endpoint, however often the row's write is retried.
            models.UniqueConstraint(fields=["record", "endpoint"], name="alert_once_per_record")
        ]
        indexes = [models.Index(fields=["state", "next_attempt_at"], name="alert_due")]

    def __str__(self) -> str:
        return f"alert {self.event_id} {self.state}"


class DeliveryAttempt(models.Model):
    """One try at sending a message, written once when it ends."""

    message = models.ForeignKey(OutboxMessage, on_delete=models.CASCADE, related_name="tries")
    at = models.DateTimeField()
    # None when no HTTP answer came (refused, timed out, unreachable): then error says why.
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.FloatField()
    # When the next try is due after this one; None after a delivery or the last try.
    next_attempt_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"attempt {self.status_code or self.error[:40]}"
