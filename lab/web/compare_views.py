"""The comparison page: agents' trial groups side by side, for their runs' viewer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal
from uuid import UUID

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lab.events.models import Run
from lab.reports.comparison import comparison_bytes
from lab.reports.comparison_export import comparison_report_for
from lab.runs.comparison import MAX_COLUMNS, ComparisonFilter, comparison_build, newest_groups
from lab.runs.ownership import runs_owned
from lab.runs.trials import trial_runs_owned
from lab.web.access import owner_token_of, user_id_for


class ComparisonQuery(BaseModel):
    """The page's query string: a channel, a mode and the groups to set side by side."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    channel: Literal["", "typed", "voice"] = ""
    mode: Literal["", "guarded", "unguarded"] = ""
    group: list[UUID] = Field(default_factory=list, max_length=MAX_COLUMNS)

    def keep(self) -> ComparisonFilter:
        return ComparisonFilter(channel=self.channel, mode=self.mode, groups=tuple(self.group))


def comparison_query(query: QueryDict) -> ComparisonQuery:
    """Parse the query once; a bad value raises ValidationError with its field named."""
    return ComparisonQuery.model_validate(
        {key: query.getlist(key) if key == "group" else query.get(key) for key in query}
    )


def render_comparison(
    request: HttpRequest,
    *,
    tenant: str,
    newest: Callable[[], list[UUID]],
    runs_of: Callable[[UUID], list[Run]],
    export: bool = False,
) -> HttpResponse:
    """Parse the query and build the comparison: the page, or its signed report to download."""
    try:
        query = comparison_query(request.GET)
    except ValidationError as error:
        problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        return HttpResponseBadRequest(f"Bad comparison query: {problem}")
    keep = query.keep()
    comparison = comparison_build(keep.groups or newest(), runs_of, keep)
    if export:
        response = HttpResponse(
            comparison_bytes(comparison_report_for(comparison)), content_type="application/json"
        )
        response["Content-Disposition"] = 'attachment; filename="comparison.json"'
        return response
    context = {
        "comparison": comparison,
        "query": query,
        "tenant": tenant,
        "query_string": request.GET.urlencode(),
    }
    return render(request, "web/compare.html", context)


def _own(request: HttpRequest, *, export: bool) -> HttpResponse:
    token, user_id = owner_token_of(request), user_id_for(request)

    def newest() -> list[UUID]:
        grouped = runs_owned(token, user_id).exclude(trial_group=None)
        return newest_groups(grouped.values_list("trial_group_id", flat=True)[:2000])

    return render_comparison(
        request,
        tenant="",
        newest=newest,
        runs_of=lambda group_id: trial_runs_owned(group_id, token, user_id),
        export=export,
    )


@never_cache
@require_safe
def compare_page(request: HttpRequest) -> HttpResponse:
    """The session's or signed-in user's own trial groups, newest first, side by side."""
    return _own(request, export=False)


@never_cache
@require_safe
def compare_report(request: HttpRequest) -> HttpResponse:
    """The same comparison as one signed report embedding its trials' evidence reports."""
    return _own(request, export=True)
