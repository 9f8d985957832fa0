from __future__ import annotations

from django.apps import AppConfig

# Cases open before anything else reacts to a flag: the alerts link the case they open.
CASES_ORDER = 10


class OperatorConfig(AppConfig):
    name = "lab.operator"
    label = "operator"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from lab.audit.landing import subscribe
        from lab.operator.cases import open_cases

        subscribe("operator.open_cases", open_cases, order=CASES_ORDER)
