"""Pages: the scenario picker, the run page (its owner's or a share link's), the event log
download and share links."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe
from pydantic import BaseModel, Field, ValidationError

from lab.accounts.agents import AgentRefused, agent_for_member, agent_ready, agents_runnable
from lab.events import store
from lab.events.actions import LAB_ACTIONS
from lab.events.models import Run
from lab.events.types import Action, Channel, Mode
from lab.runs.ownership import (
    Access,
    RunAccess,
    owner_user_set,
    runs_owned,
    share_link_create,
)
from lab.runs.recording_files import recording_path
from lab.runs.retrieval import tenant_constraints
from lab.runs.services import run_start
from lab.runs.trials import trial_runs_create
from lab.scenarios.catalog import (
    FREE_CALL_ID,
    UnknownScenario,
    all_contracts,
    contract_get,
    free_contract,
)
from lab.scenarios.contracts import Contract
from lab.web import report_views
from lab.web.access import owner_token_ensure, owner_token_of, run_for_request, user_id_for
from lab.web.panel import TEMPLATE, panel_context
from lab.web.playback import recording_context
from lab.web.trial_player import (
    MAX_REPEAT,
    TrialsBusy,
    trials_play,
    trials_release,
    trials_reserve,
)


class RunForm(BaseModel):
    scenario: str
    mode: Mode = Mode.GUARDED
    channel: Channel = Channel.TYPED
    ungrounded: bool = False
    # tenant/agent the run is for; empty for a public run that writes into no tenant.
    agent: str = Field(default="", max_length=140)
    # How many times to play it: 1 is a live run; more, a trial group played headless.
    repeat: int = Field(default=1, ge=1, le=MAX_REPEAT)

    def repeat_problem(self) -> str:
        """Why a repeat this form asks for cannot be played headless ("" when it can)."""
        if self.repeat == 1:
            return ""
        if self.scenario == FREE_CALL_ID:
            return "the free call has no scripted caller to repeat it; play it once"
        if self.channel is not Channel.TYPED:
            return "repeated runs are typed; pick typed, or play it once"
        if self.agent.strip():
            return "repeated runs play the lab's own agent; pick nobody, or play it once"
        return ""


@require_safe
def index(request: HttpRequest) -> HttpResponse:
    recent = runs_owned(owner_token_of(request), user_id_for(request))[:10]
    return render(request, "web/index.html", _index_context(request, recent=recent))


def _index_context(request: HttpRequest, **extra: Any) -> dict[str, Any]:
    facts = tenant_constraints()
    return {
        "contracts": _picker_contracts(),
        # The free call has no scripted caller, so nothing to repeat headless.
        "free_call_id": FREE_CALL_ID,
        "agents": agents_runnable(request.user),
        "recent": [],
        "business": facts.business,
        "services": [service.name for service in facts.services],
        **extra,
    }


@require_POST
async def run_create(request: HttpRequest) -> HttpResponse:
    """One live run, or with repeat K > 1 a trial group of K headless runs played here."""
    form = await sync_to_async(_run_form)(request)
    if isinstance(form, HttpResponse):
        return form
    if form.repeat == 1:
        return await sync_to_async(_run_once)(request, form)
    # Repeat trials play the lab's own agent.
    if refused := await sync_to_async(_actions_refused)(request, form, frozenset(LAB_ACTIONS)):
        return refused
    try:
        slot = trials_reserve()
    except TrialsBusy as busy:
        return await sync_to_async(_bad_request)(request, str(busy), status=429)
    try:
        runs = await sync_to_async(_trials_create)(request, form)
    except BaseException:
        trials_release(slot)
        raise
    trials_play(slot, runs, owner_token=owner_token_of(request) or "", host=request.get_host())
    return redirect("trials_page", group_id=runs[0].trial_group_id)


def _run_form(request: HttpRequest) -> RunForm | HttpResponse:
    fields = {
        key: request.POST[key]
        for key in ("scenario", "mode", "channel", "agent", "repeat")
        if key in request.POST
    }
    if request.POST.get("unguarded") == "on":
        fields["mode"] = Mode.UNGUARDED.value
    ungrounded = request.POST.get("ungrounded") == "on"
    try:
        form = RunForm.model_validate({**fields, "ungrounded": ungrounded})
        contract_get(form.scenario)
    except ValidationError as error:
        problems = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in error.errors(include_url=False))
        return _bad_request(request, f"The run could not start: {problems}.")
    except UnknownScenario as error:
        return _bad_request(request, str(error).capitalize() + ".")
    if problem := form.repeat_problem():
        return _bad_request(request, f"The run could not start: repeat: {problem}.")
    return form


def _run_once(request: HttpRequest, form: RunForm) -> HttpResponse:
    try:
        tenant_agent = agent_for_member(request.user, form.agent) if form.agent.strip() else None
        # A registered agent is tested as registered: its connector, URL, model and key.
        agent = agent_ready(tenant_agent) if tenant_agent else None
    except AgentRefused as refused:
        return _bad_request(request, f"The run could not start: {refused}", status=refused.status)
    known = agent.known_actions if agent else frozenset(LAB_ACTIONS)
    if refused_actions := _actions_refused(request, form, known):
        return refused_actions
    run = run_start(
        scenario_id=form.scenario,
        mode=form.mode,
        channel=form.channel,
        owner_token=owner_token_ensure(request),
        ungrounded=form.ungrounded,
        agent=agent,
        tenant_agent=tenant_agent,
    )
    user_id = user_id_for(request)
    if user_id is not None:
        owner_user_set(run=run, user_id=user_id)
    return redirect("run_page", run_id=run.id)


def _actions_refused(
    request: HttpRequest, form: RunForm, known: frozenset[Action]
) -> HttpResponse | None:
    """A scenario meaning an action neither the lab nor the agent's tools file knows (a typo,
    "bok") is refused, naming the line, the field and the known actions."""
    if problems := contract_get(form.scenario).unknown_actions(known):
        return _bad_request(request, f"The run could not start: {'; '.join(problems)}.")
    return None


def _trials_create(request: HttpRequest, form: RunForm) -> list[Run]:
    return trial_runs_create(
        scenario_id=form.scenario,
        trials=form.repeat,
        mode=form.mode,
        ungrounded=form.ungrounded,
        owner_token=owner_token_ensure(request),
        user_id=user_id_for(request),
    )


def _picker_contracts() -> list[Contract]:
    """ "Just call the agent" first, then the scripted scenarios."""
    return [free_contract(), *all_contracts().values()]


def _bad_request(request: HttpRequest, message: str, *, status: int = 400) -> HttpResponse:
    return render(request, "web/index.html", _index_context(request, error=message), status=status)


def _page_context(request: HttpRequest, access: RunAccess) -> dict[str, Any]:
    run = access.run
    contract = contract_get(run.scenario_id)
    if access.access is Access.SHARED:
        share = request.resolver_match.kwargs["share"] if request.resolver_match else ""
        urls = {
            "ws_url": f"/ws/share/{share}/",
            "events_url": reverse("shared_events_json", args=[share]),
            "report_url": reverse("shared_report_json", args=[share]),
            "recording_url": reverse("shared_recording_wav", args=[share]),
        }
    else:
        urls = {
            "ws_url": f"/ws/runs/{run.id}/",
            "events_url": reverse("run_events_json", args=[run.id]),
            "report_url": reverse("run_report_json", args=[run.id]),
            "recording_url": reverse("run_recording_wav", args=[run.id]),
        }
    events = store.run_events(run)
    recording_url = urls.pop("recording_url")
    # A live run's file is still growing: the player comes with the end.
    recorded = run.status == Run.Status.ENDED and recording_path(str(run.id)).is_file()
    return {
        **recording_context(events, url=recording_url if recorded else None, offer_file=False),
        "run": run,
        "access": access.access.value,
        # The socket says whether this window drives; until then nothing looks live.
        "role": "connecting" if access.may_drive else "shared",
        **urls,
        **panel_context(contract, events),
        # A share link opens this run only, not the other trials of its group.
        "trials_url": reverse("trials_page", args=[run.trial_group_id])
        if run.trial_group_id and access.may_drive
        else "",
        # Before run.started names it, the run's own spec says which agent will be tested.
        **({"agent_under_test": _spec_label(run)} if not events and run.agent_connector else {}),
    }


def _spec_label(run: Run) -> str:
    parts = [run.agent_connector, run.agent_endpoint, f"(model {run.agent_model})"]
    return " ".join(part for part in parts if part and part != "(model )")


@never_cache
@require_safe
def run_page(request: HttpRequest, run_id: UUID | None = None, share: str = "") -> HttpResponse:
    access = run_for_request(request, run_id)
    try:
        context = _page_context(request, access)
    except UnknownScenario as error:
        return _bad_request(request, str(error).capitalize() + ".")
    return render(request, "web/run.html", context)


@require_POST
def run_share(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """A new read-only link to the owner's run, shown once (only its digest is stored)."""
    access = run_for_request(request, run_id)
    if not access.may_drive:
        return HttpResponse("Only the run's owner can share it.\n", status=403)
    token = share_link_create(run=access.run)
    share_url = request.build_absolute_uri(reverse("shared_run_page", args=[token]))
    if request.headers.get("HX-Request") == "true":
        context = {"run": access.run, "share_url": share_url}
        return render(request, f"{TEMPLATE}#share", context)
    context = {**_page_context(request, access), "share_url": share_url}
    response = render(request, "web/run.html", context)
    response["Cache-Control"] = "no-store"
    return response


@never_cache
@require_safe
def run_events_json(
    request: HttpRequest, run_id: UUID | None = None, share: str = ""
) -> HttpResponse:
    run = run_for_request(request, run_id).run
    events = store.run_events(run)
    body = {
        "run_id": str(run.id),
        "scenario_id": run.scenario_id,
        "mode": run.mode,
        "channel": run.channel,
        "ungrounded": run.ungrounded,
        "events": [event.model_dump(mode="json") for event in events],
    }
    response = HttpResponse(json.dumps(body, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="run-{run.id}-events.json"'
    return response


@never_cache
@require_safe
def shared_report_json(request: HttpRequest, share: str) -> HttpResponse:
    """A share link's evidence report: the owner's download, reached through the link."""
    run = run_for_request(request).run
    return report_views.run_report_json(request, str(run.id))


@require_safe
def scenario_json(request: HttpRequest, scenario_id: str) -> HttpResponse:
    try:
        contract = contract_get(scenario_id)
    except UnknownScenario as error:
        return JsonResponse({"error": str(error)}, status=404)
    return JsonResponse(
        {"contract": contract.model_dump(mode="json"), "contract_hash": contract.contract_hash}
    )
