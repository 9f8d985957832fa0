"""A tenant's webhook endpoints (add, disable, enable) and its recent deliveries.

Owners and admins only: anonymous visitors are sent to log in, other members get 403, anyone
else is told there is no such page (404). A new endpoint's secret is shown once, on creation.
"""

from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lab.accounts.access import role_in
from lab.accounts.roles import can_manage
from lab.alerts.models import WebhookEndpoint
from lab.alerts.outbox import endpoint_create, endpoint_set_active, endpoint_url_check
from lab.alerts.selectors import endpoints_of, recent_alerts
from lab.alerts.signing import EVENT_ID_HEADER, SIGNATURE_HEADER

NOT_FOUND = "There is no such page."
FORBIDDEN = "Only the tenant's owners and admins manage its webhooks."


class EndpointForm(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(min_length=1, max_length=500)

    @field_validator("url")
    @classmethod
    def _public_http_url(cls, value: str) -> str:
        # Public http(s) addresses only, unless LAB_OUTBOUND_ALLOWED_HOSTS names the host.
        return endpoint_url_check(value)


def _denied(request: HttpRequest, tenant: str) -> HttpResponse | None:
    """Why this request may not manage the tenant's webhooks, or None when it may."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    role = role_in(request.user, tenant)
    if role is None:
        raise Http404(NOT_FOUND)
    if not can_manage(role):
        return HttpResponse(FORBIDDEN, status=403, content_type="text/plain; charset=utf-8")
    return None


def _page(
    request: HttpRequest,
    tenant: str,
    *,
    created: WebhookEndpoint | None = None,
    error: str | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "tenant": tenant,
        "endpoints": endpoints_of(tenant),
        "alerts": recent_alerts(tenant),
        "created": created,
        "error": error,
        "signature_header": SIGNATURE_HEADER,
        "event_id_header": EVENT_ID_HEADER,
    }
    return render(request, "alerts/settings.html", context, status=status)


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def alerts_page(request: HttpRequest, tenant: str) -> HttpResponse:
    """GET lists the endpoints and recent deliveries; POST adds an endpoint."""
    denied = _denied(request, tenant)
    if denied is not None:
        return denied
    if request.method != "POST":
        return _page(request, tenant)
    try:
        form = EndpointForm(url=request.POST.get("url", "").strip())
    except ValidationError as error:
        problems = "; ".join(
            e["msg"].removeprefix("Value error, ") for e in error.errors(include_url=False)
        )
        return _page(request, tenant, error=f"No endpoint was added: {problems}.", status=400)
    endpoint = endpoint_create(tenant=tenant, url=form.url)
    return _page(request, tenant, created=endpoint, status=201)


@require_POST
def endpoint_active(request: HttpRequest, tenant: str, endpoint_id: int) -> HttpResponse:
    """Disable (active=0) or enable (active=1) one of the tenant's endpoints."""
    denied = _denied(request, tenant)
    if denied is not None:
        return denied
    endpoint = get_object_or_404(WebhookEndpoint, pk=endpoint_id, tenant=tenant)
    active = request.POST.get("active")
    if active not in {"0", "1"}:
        return _page(request, tenant, error="active must be 0 or 1.", status=400)
    endpoint_set_active(endpoint=endpoint, active=active == "1")
    return redirect("alerts_page", tenant=tenant)
