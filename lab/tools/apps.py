from __future__ import annotations

from django.apps import AppConfig


class ToolsConfig(AppConfig):
    name = "lab.tools"
    label = "tools"
    default_auto_field = "django.db.models.BigAutoField"
