from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "lab.accounts"
    label = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the receivers that tell open sockets a right is gone.
        from lab.accounts import revocation  # noqa: F401
