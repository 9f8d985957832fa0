from __future__ import annotations

from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "lab.web"
    label = "web"

    def ready(self) -> None:
        # Connects the receiver that closes a signed-out session's run sockets.
        from lab.web import signout  # noqa: F401
