from __future__ import annotations

from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "lab.reports"
    label = "reports"
    default_auto_field = "django.db.models.BigAutoField"
