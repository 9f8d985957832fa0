"""ASGI entry point: HTTP through Django, WebSockets through Channels, behind the lab's guards."""

from __future__ import annotations

import os

from asgiref.sync import sync_to_async
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application
from django.core.exceptions import SuspiciousOperation
from django.core.handlers.exception import response_for_exception
from django.http import Http404, HttpRequest, HttpResponseBase

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
django_asgi_app = get_asgi_application()

# Routing imports models, so it must come after the app registry is ready.
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from lab.operator.routing import websocket_urlpatterns as queue_sockets  # noqa: E402
from lab.web import request_limits  # noqa: E402
from lab.web.closed_sockets import ClosedSocketSends  # noqa: E402
from lab.web.mcp_http import MCP_ENDPOINT, McpMount  # noqa: E402
from lab.web.routing import websocket_urlpatterns  # noqa: E402
from lab.web.security import OriginValidator, SecurityHeaders  # noqa: E402


class StaticFiles(ASGIStaticFilesHandler):
    """The lab's few static files; a path that leaves the static folders is simply not found."""

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        try:
            return await super().get_response_async(request)
        except (SuspiciousOperation, ValueError, OSError):
            # Traversal (SuspiciousFileOperation), a NUL byte (ValueError), a name too long
            # (OSError): each is a file that is not there, not a server error.
            missing = Http404("There is no such static file.")
            return await sync_to_async(response_for_exception, thread_sensitive=False)(
                request, missing
            )


request_limits.install()

application = SecurityHeaders(
    ProtocolTypeRouter(
        {
            # The lab is a local tool: it serves its own few static files. /mcp/ is each run's
            # sandboxed tools over MCP (lab/web/mcp_http.py), beside Django rather than in it.
            "http": McpMount(StaticFiles(django_asgi_app), MCP_ENDPOINT),
            "websocket": ClosedSocketSends(
                OriginValidator(URLRouter(websocket_urlpatterns + queue_sockets))
            ),
        }
    )
)
