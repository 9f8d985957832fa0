from __future__ import annotations

from channels.sessions import SessionMiddlewareStack
from django.urls import URLPattern, path

from lab.web.consumers import RunConsumer
from lab.web.live import REGISTRY, LiveRegistry


def run_socket_routes(registry: LiveRegistry) -> list[URLPattern]:
    """The run sockets, bound to one process's live runs (tests build a second "process")."""
    consumer = SessionMiddlewareStack(RunConsumer.as_asgi(registry=registry))
    return [
        path("ws/runs/<uuid:run_id>/", consumer),
        path("ws/share/<str:share>/", consumer),
    ]


websocket_urlpatterns = run_socket_routes(REGISTRY)
