"""The repeat-trial page of an invocation's runs, for the runs' owner."""

from __future__ import annotations

from uuid import UUID

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from lab.runs.trials import trial_runs_owned, trial_table
from lab.web.access import owner_token_of, user_id_for

NO_GROUP = "There are no trials with this id."


@never_cache
@require_safe
def trials_page(request: HttpRequest, group_id: UUID) -> HttpResponse:
    """Per scenario, the K trials side by side; someone else's group and none look the same."""
    runs = trial_runs_owned(group_id, owner_token_of(request), user_id_for(request))
    table = trial_table(runs)
    if table is None:
        raise Http404(NO_GROUP)
    return render(request, "web/trials.html", {"table": table, "tenant": ""})
