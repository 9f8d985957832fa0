"""Reading a tenant's endpoints and its recent alerts with their delivery attempts."""

from __future__ import annotations

from django.db.models import QuerySet

from lab.alerts.models import OutboxMessage, WebhookEndpoint

RECENT = 50


def endpoints_of(tenant: str) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(tenant=tenant).order_by("-id")


def recent_alerts(tenant: str, limit: int = RECENT) -> list[OutboxMessage]:
    """The tenant's newest alerts, each with its endpoint, audit row and attempts."""
    return list(
        OutboxMessage.objects.filter(endpoint__tenant=tenant)
        .select_related("endpoint", "record")
        .prefetch_related("tries")
        .order_by("-id")[:limit]
    )
