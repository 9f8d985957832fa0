"""Setting a run up for an outside agent's MCP client: its tools' URL and bearer token."""

from __future__ import annotations

from uuid import UUID

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from lab.connectors.mcp_access import mcp_token_issue, run_tool_specs
from lab.events.models import Run
from lab.events.types import Mode
from lab.web.access import run_for_request
from lab.web.panel import TEMPLATE


@require_POST
def run_mcp_token(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """The run's MCP URL and a new token, shown this once (only its digest is stored): JSON, or
    the run page's fragment for htmx; a new token revokes the one before it."""
    access = run_for_request(request, run_id)
    run = access.run
    if not access.may_drive:
        return JsonResponse({"error": "Only the run's owner can open its tools."}, status=403)
    if run.status == Run.Status.ENDED:
        return JsonResponse({"error": "This run has ended; its tools are closed."}, status=409)
    setup = {
        "url": request.build_absolute_uri(f"/mcp/runs/{run.id}/"),
        "token": mcp_token_issue(run=run),
        "tools": [spec.name for spec in run_tool_specs(run)],
        "gated": run.mode == Mode.GUARDED,
    }
    if request.headers.get("HX-Request") == "true":
        response = render(request, f"{TEMPLATE}#mcp", {"run": run, "mcp": setup})
    else:
        response = JsonResponse(setup)
    response["Cache-Control"] = "no-store"
    return response
