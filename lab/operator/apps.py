from __future__ import annotations

from django.apps import AppConfig


class OperatorConfig(AppConfig):
    name = "lab.operator"
    label = "operator"
    default_auto_field = "django.db.models.BigAutoField"
