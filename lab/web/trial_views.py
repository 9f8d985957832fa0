"""The repeat-trial page of an invocation's runs, for the runs' owner, and the fragment it
polls while its trials play."""

from __future__ import annotations

from uuid import UUID

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from lab.runs.trial_players import trials_abandon
from lab.runs.trials import TrialTable, trial_runs_owned, trial_table
from lab.web.access import owner_token_of, user_id_for
from lab.web.trial_player import trials_playing

NO_GROUP = "There are no trials with this id."


@never_cache
@require_safe
def trials_page(request: HttpRequest, group_id: UUID) -> HttpResponse:
    """Per scenario, the K trials side by side; someone else's group and none look the same."""
    return render(request, "web/trials.html", _context(request, group_id))


@never_cache
@require_safe
def trials_progress(request: HttpRequest, group_id: UUID) -> HttpResponse:
    """The page's table alone, which the page polls until every trial has finished."""
    return render(request, "web/trials.html#table", _context(request, group_id))


def _context(request: HttpRequest, group_id: UUID) -> dict[str, object]:
    if trials_playing(group_id) is None:
        # Nobody here plays it: a group whose player's lease lapsed (its server died) ends
        # its unfinished runs as abandoned, so the page stops polling and says why.
        trials_abandon(group_id)
    table: TrialTable | None = trial_table(
        trial_runs_owned(group_id, owner_token_of(request), user_id_for(request))
    )
    if table is None:
        raise Http404(NO_GROUP)
    progress_url = reverse("trials_progress", args=[group_id])
    return {"table": table, "tenant": "", "progress_url": progress_url}
