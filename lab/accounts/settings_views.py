"""A tenant's settings (`/t/<tenant>/settings/`), for its owners and admins: whether warn flags
alert too, the constraint lists its turns are graded against, and where its agents may be.

Only `alert_on_warn` is the tenant's to change. The constraint lists are versioned files the
lab's operator keeps, and the internal hosts agents and webhooks may reach are the operator's
setting: the page shows both, so a tenant knows what holds and whom to ask.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods
from pydantic import BaseModel, ConfigDict

from lab.accounts.access import role_in
from lab.accounts.models import Tenant
from lab.accounts.roles import can_manage
from lab.alerts.targets import OUTBOUND_SETTING
from lab.facts.errors import ConstraintListError
from lab.facts.loader import load_tenant, tenant_versions

NOT_FOUND = "There is no such page."
FORBIDDEN = "Only the tenant's owners and admins see and change its settings."


class SettingsForm(BaseModel):
    """The settings a tenant changes itself; an unticked checkbox is simply absent."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    alert_on_warn: bool = False


@dataclass(frozen=True)
class ListVersion:
    version: str
    business: str
    services: int
    digest: str
    newest: bool


def _versions(tenant: str) -> list[ListVersion]:
    """The tenant's constraint lists, newest first; a file that does not load is left out."""
    numbers = tenant_versions(tenant)
    found = []
    for number in reversed(numbers):
        try:
            loaded = load_tenant(tenant, number)
        except ConstraintListError:
            continue
        found.append(
            ListVersion(
                version=loaded.version,
                business=loaded.business,
                services=len(loaded.services),
                digest=loaded.digest()[:12],
                newest=number == numbers[-1],
            )
        )
    return found


@require_http_methods(["GET", "HEAD", "POST"])
def tenant_settings(request: HttpRequest, tenant: str) -> HttpResponse:
    """GET shows the settings; POST saves what the tenant may change."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    role = role_in(request.user, tenant)
    if role is None:
        raise Http404(NOT_FOUND)
    if not can_manage(role):
        return HttpResponse(FORBIDDEN, status=403, content_type="text/plain; charset=utf-8")
    owner = get_object_or_404(Tenant, slug=tenant)
    if request.method == "POST":
        form = SettingsForm(alert_on_warn=request.POST.get("alert_on_warn") == "on")
        Tenant.objects.filter(pk=owner.pk).update(alert_on_warn=form.alert_on_warn)
        return redirect("tenant_settings", tenant=tenant)
    allowed = sorted(
        f"{rule.host}:{rule.port}" if rule.port else rule.host
        for rule in settings.LAB_OUTBOUND_ALLOWED_HOSTS
    )
    context = {
        "tenant": tenant,
        "role": role.value,
        "alert_on_warn": owner.alert_on_warn,
        "versions": _versions(tenant),
        "allowed_hosts": allowed,
        "outbound_setting": OUTBOUND_SETTING,
    }
    return render(request, "accounts/tenant_settings.html", context)
