"""Pages: the scenario picker, the run page and the run's event log download."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from pydantic import BaseModel, ValidationError

from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.runs.services import run_start
from lab.scenarios.catalog import UnknownScenario, all_contracts, contract_get, free_contract
from lab.scenarios.contracts import Contract
from lab.web.panel import panel_context


class RunForm(BaseModel):
    scenario: str
    mode: Mode = Mode.GUARDED
    channel: Channel = Channel.TYPED


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    recent = Run.objects.all()[:10]
    return render(request, "web/index.html", {"contracts": _picker_contracts(), "recent": recent})


@require_POST
def run_create(request: HttpRequest) -> HttpResponse:
    fields = {
        key: request.POST[key] for key in ("scenario", "mode", "channel") if key in request.POST
    }
    if request.POST.get("unguarded") == "on":
        fields["mode"] = Mode.UNGUARDED.value
    try:
        form = RunForm.model_validate(fields)
        run = run_start(scenario_id=form.scenario, mode=form.mode, channel=form.channel)
    except ValidationError as error:
        problems = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in error.errors(include_url=False))
        return _bad_request(request, f"The run could not start: {problems}.")
    except UnknownScenario as error:
        return _bad_request(request, str(error).capitalize() + ".")
    return redirect("run_page", run_id=run.id)


def _picker_contracts() -> list[Contract]:
    """ "Just call the agent" first, then the scripted scenarios."""
    return [free_contract(), *all_contracts().values()]


def _bad_request(request: HttpRequest, message: str) -> HttpResponse:
    return render(
        request,
        "web/index.html",
        {"contracts": _picker_contracts(), "recent": [], "error": message},
        status=400,
    )


@require_GET
def run_page(request: HttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    try:
        contract = contract_get(run.scenario_id)
    except UnknownScenario as error:
        return _bad_request(request, str(error).capitalize() + ".")
    events = store.run_events(run)
    context = {"run": run, **panel_context(contract, events)}
    return render(request, "web/run.html", context)


@require_GET
def run_events_json(request: HttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    events = store.run_events(run)
    body = {
        "run_id": str(run.id),
        "scenario_id": run.scenario_id,
        "mode": run.mode,
        "channel": run.channel,
        "events": [event.model_dump(mode="json") for event in events],
    }
    response = HttpResponse(json.dumps(body, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="run-{run.id}-events.json"'
    return response


@require_GET
def scenario_json(request: HttpRequest, scenario_id: str) -> HttpResponse:
    try:
        contract = contract_get(scenario_id)
    except UnknownScenario as error:
        return JsonResponse({"error": str(error)}, status=404)
    return JsonResponse(
        {"contract": contract.model_dump(mode="json"), "contract_hash": contract.contract_hash}
    )
