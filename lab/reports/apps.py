from __future__ import annotations

from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "lab.reports"
    label = "reports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from lab.reports.keys import configured_trusted_keys

        # A LAB_TRUSTED_KEYS file that is missing or not a key stops the lab at start-up,
        # not the first import that needs it.
        configured_trusted_keys()
