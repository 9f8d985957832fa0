"""What a flag's card links to, for the tenant's members: the call's transcript from its audit
rows, a lab run's stored log and signed evidence report, and a repeat-trial group's runs.

These are the tenant's view of its own audit rows, read-only: a run is reachable here only when
it was run for the tenant (Run.tenant) and has audit rows of it, and its owner-only pages under
/runs/<id>/ stay so.
"""

from __future__ import annotations

from uuid import UUID

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from lab.accounts.roles import Role
from lab.events import store
from lab.events.models import Run
from lab.operator.calls import call_turns
from lab.operator.members import members_only
from lab.runs.trials import trial_groups_of_tenant, trial_runs_of_tenant, trial_table
from lab.scenarios.catalog import UnknownScenario, contract_get
from lab.web.compare_views import render_comparison
from lab.web.panel import panel_context
from lab.web.report_views import report_download

NO_CALL = "This tenant has no audited call with this id."
NO_RUN = "This tenant has no audited turn in a run with this id."
NO_TRIALS = "This tenant has no trials with this id."


def tenant_run(tenant: str, run_id: UUID) -> Run:
    """The run, when it was the tenant's and has its audit rows; Http404 otherwise (a stranger's
    run stays the stranger's, whatever rows older labs filed under the tenant)."""
    run = (
        Run.objects.filter(pk=run_id, tenant=tenant, audit_records__tenant=tenant)
        .distinct()
        .first()
    )
    if run is None:
        raise Http404(NO_RUN)
    return run


@never_cache
@require_safe
@members_only
def call_page(request: HttpRequest, tenant: str, role: Role, call_id: str) -> HttpResponse:
    """The call's transcript in turn order, each agent turn graded, the flagged ones marked."""
    turns = call_turns(tenant, call_id)
    if not turns:
        raise Http404(NO_CALL)
    first = turns[0].record
    context = {
        "tenant": tenant,
        "call_id": call_id,
        "agent": first.agent,
        "turns": turns,
        "flagged": sum(t.record.flagged for t in turns),
        "run_id": first.run_id,
    }
    return render(request, "operator/call.html", context)


@never_cache
@require_safe
@members_only
def run_snapshot(request: HttpRequest, tenant: str, role: Role, run_id: UUID) -> HttpResponse:
    """The run's stored log drawn once on the server: no socket, nothing to drive."""
    run = tenant_run(tenant, run_id)
    try:
        contract = contract_get(run.scenario_id)
    except UnknownScenario as error:
        return HttpResponse(f"No snapshot: {error}.\n", status=409, content_type="text/plain")
    context = {
        "tenant": tenant,
        "run": run,
        **panel_context(contract, store.run_events(run)),
    }
    return render(request, "operator/run.html", context)


@never_cache
@require_safe
@members_only
def run_report(request: HttpRequest, tenant: str, role: Role, run_id: UUID) -> HttpResponse:
    """The run's signed evidence report, as its owner downloads it from the run page."""
    return report_download(tenant_run(tenant, run_id))


@never_cache
@require_safe
@members_only
def trials_page(request: HttpRequest, tenant: str, role: Role, group_id: UUID) -> HttpResponse:
    """A repeat-trial group's runs for the tenant, side by side, each linking to its snapshot."""
    table = trial_table(trial_runs_of_tenant(group_id, tenant))
    if table is None:
        raise Http404(NO_TRIALS)
    return render(request, "web/trials.html", {"table": table, "tenant": tenant})


@never_cache
@require_safe
@members_only
def trials_list(request: HttpRequest, tenant: str, role: Role) -> HttpResponse:
    """The tenant's newest repeat-trial groups, each linking to its side-by-side page."""
    context = {"tenant": tenant, "groups": trial_groups_of_tenant(tenant)}
    return render(request, "operator/trials.html", context)


def _compare(request: HttpRequest, tenant: str, *, export: bool) -> HttpResponse:
    return render_comparison(
        request,
        tenant=tenant,
        newest=lambda: [summary.group.id for summary in trial_groups_of_tenant(tenant)],
        runs_of=lambda group_id: trial_runs_of_tenant(group_id, tenant),
        export=export,
    )


@never_cache
@require_safe
@members_only
def compare_page(request: HttpRequest, tenant: str, role: Role) -> HttpResponse:
    """The tenant's trial groups (its agents) side by side, newest first or as chosen."""
    return _compare(request, tenant, export=False)


@never_cache
@require_safe
@members_only
def compare_report(request: HttpRequest, tenant: str, role: Role) -> HttpResponse:
    """The tenant's comparison as one signed report embedding its trials' evidence reports."""
    return _compare(request, tenant, export=True)
