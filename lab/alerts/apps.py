"""Alert webhooks for flagged turns: endpoints, the outbox and its delivery attempts."""

from __future__ import annotations

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "lab.alerts"
    label = "alerts"
    default_auto_field = "django.db.models.BigAutoField"
