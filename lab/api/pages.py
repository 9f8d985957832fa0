"""The tenant rollup page: the daily trend as an inline SVG chart, per agent, and triage."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from lab.accounts.access import role_in
from lab.accounts.roles import can_view_rollup
from lab.api.chart import trend_chart
from lab.api.rollup import tenant_rollup
from lab.api.rollup_fold import DEFAULT_DAYS, MAX_DAYS
from lab.grading.grounding import GroundingVerdict
from lab.grading.schema import Verdict
from lab.operator.models import FlagCase

TRIAGE_ON_PAGE = 20
DAY_CHOICES = (7, 30, 90)


@require_safe
@login_required
def rollup_page(request: HttpRequest, tenant: str) -> HttpResponse:
    """Owners and admins only: a non-member is told nothing exists (404), others 403."""
    role = role_in(request.user, tenant)
    if role is None:
        raise Http404("No such tenant.")
    if not can_view_rollup(role):
        raise PermissionDenied("The rollup is for the tenant's owners and admins.")
    raw = request.GET.get("days", str(DEFAULT_DAYS))
    days = int(raw) if raw.isdecimal() and len(raw) <= 3 else 0
    if not 1 <= days <= MAX_DAYS:
        return HttpResponseBadRequest(
            f"days must be between 1 and {MAX_DAYS}", content_type="text/plain; charset=utf-8"
        )
    rollup = tenant_rollup(
        tenant, days=days, triage_limit=TRIAGE_ON_PAGE, today=timezone.now().date()
    )
    # Each triage turn links to its case card, where one was opened for it.
    cases = dict(
        FlagCase.objects.filter(record_id__in=[t.id for t in rollup.triage]).values_list(
            "record_id", "id"
        )
    )
    return render(
        request,
        "rollup/rollup.html",
        {
            "rollup": rollup,
            "triage": [(turn, cases.get(turn.id)) for turn in rollup.triage],
            "chart": trend_chart(rollup.trend),
            "verdicts": list(Verdict),
            "groundings": list(GroundingVerdict),
            "day_choices": DAY_CHOICES,
        },
    )
