from __future__ import annotations

from channels.auth import AuthMiddlewareStack
from django.urls import URLPattern, path

from lab.operator.consumers import QueueConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/t/<slug:tenant>/queue/", AuthMiddlewareStack(QueueConsumer.as_asgi())),
]
