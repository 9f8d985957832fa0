"""Alert webhooks for flagged turns: endpoints, the outbox and its delivery attempts."""

from __future__ import annotations

from django.apps import AppConfig

# After the operator's cases (lab.operator.apps.CASES_ORDER): the console link names the case.
ALERTS_ORDER = 20


class AlertsConfig(AppConfig):
    name = "lab.alerts"
    label = "alerts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from lab.alerts.outbox import enqueue_alerts
        from lab.audit.landing import subscribe

        subscribe("alerts.enqueue_alerts", enqueue_alerts, order=ALERTS_ORDER)
