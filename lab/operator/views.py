"""The operator console: a tenant's flag queue, one case's card, and the actions cards post
over htmx.

Members only (lab.operator.members); a viewer may look but not act (403).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe
from pydantic import ValidationError

from lab.accounts.roles import Role, can_act, can_manage
from lab.grading.schema import Category, Severity
from lab.operator.acting import BadTarget, CaseNotFound, Conflict, act
from lab.operator.cards import TEMPLATE, card_of, cards_for, escalation_targets, render_card
from lab.operator.filters import MAX_ID, BadFilter, QueueFilter, parse_filter
from lab.operator.members import member_role, members_only, to_login
from lab.operator.models import FlagCase
from lab.operator.queue import agents_of, candidates_of, queue_has, queue_page_cases
from lab.operator.states import ActRequest, CaseState, InvalidTransition

NO_CASE = "There is no such case in this queue."


@never_cache
@require_safe
@members_only
def queue_page(request: HttpRequest, tenant: str, role: Role) -> HttpResponse:
    """Flagged turns, newest first, filtered by severity, category, agent and state."""
    context: dict[str, Any] = {
        "tenant": tenant,
        "role": role.value,
        "may_act": can_act(role),
        "agents": agents_of(tenant),
        "severities": [s.value for s in Severity],
        "categories": [c.value for c in Category],
        "states": [s.value for s in CaseState],
    }
    try:
        wanted = parse_filter(dict(request.GET.lists()))
    except BadFilter as error:
        context |= {"filter": QueueFilter(), "error": str(error), "cards": []}
        return render(request, TEMPLATE, context, status=400)
    page = queue_page_cases(tenant, wanted)
    context |= {
        "filter": wanted,
        "cards": cards_for(page.cases),
        "targets": escalation_targets(tenant) if can_act(role) else [],
        "next_url": f"?{urlencode(wanted.query(before=page.next_before))}"
        if page.next_before
        else None,
        "ws_url": _socket_url(tenant, request, page.cases),
        # Those who maintain the constraint list see what overrides proposed for it.
        "candidates": candidates_of(tenant) if can_manage(role) else None,
    }
    return render(request, TEMPLATE, context)


def _socket_url(tenant: str, request: HttpRequest, shown: list[FlagCase]) -> str:
    """The page's socket: its own filters, and the newest record it shows."""
    query = request.GET.copy()
    query["after"] = str(shown[0].record_id if shown else 0)
    return f"/ws/t/{tenant}/queue/?{query.urlencode()}"


@require_POST
def case_act(request: HttpRequest, tenant: str, case_id: int) -> HttpResponse:
    """Acknowledge, override or escalate one case; the answer is the card as it now stands."""
    actor = request.user
    if not isinstance(actor, User) or not actor.is_authenticated:
        return to_login(request, tenant)
    role = member_role(request, tenant)
    if case_id > MAX_ID:
        raise Http404(NO_CASE)
    if not can_act(role):
        return _card_answer(
            request,
            tenant,
            role,
            case_id,
            f"A {role.value} can look at the queue but not act.",
            403,
        )
    try:
        asked = ActRequest.model_validate(request.POST.dict())
    except ValidationError as error:
        message = str(error.errors()[0]["msg"]).removeprefix("Value error, ")
        field = ".".join(str(part) for part in error.errors()[0]["loc"])
        return _card_answer(
            request, tenant, role, case_id, f"{field}: {message}" if field else message, 400
        )
    try:
        act(
            tenant=tenant,
            case_id=case_id,
            actor=actor,
            action=asked.action,
            expected_version=asked.expected_version,
            note=asked.note,
            escalate_to=asked.escalate_to,
        )
    except CaseNotFound:
        raise Http404(NO_CASE) from None
    except Conflict as conflict:
        return _card_answer(request, tenant, role, case_id, str(conflict), 409)
    except InvalidTransition as error:
        return _card_answer(request, tenant, role, case_id, f"Not done: {error}.", 409)
    except BadTarget as error:
        return _card_answer(request, tenant, role, case_id, f"Not escalated: {error}.", 400)
    return _card_answer(request, tenant, role, case_id, "", 200)


@never_cache
@require_safe
@members_only
def case_page(request: HttpRequest, tenant: str, role: Role, case_id: int) -> HttpResponse:
    """One case's card alone, its actions working as they do in the queue."""
    if case_id > MAX_ID:
        raise Http404(NO_CASE)
    return _card_answer(request, tenant, role, case_id, "", 200)


def _card_answer(
    request: HttpRequest, tenant: str, role: Role, case_id: int, message: str, status: int
) -> HttpResponse:
    """The case's card with what happened; a whole page when the form was posted without htmx."""
    if not queue_has(tenant, case_id):
        raise Http404(NO_CASE)
    card = card_of(case_id)
    may_act = can_act(role)
    targets = escalation_targets(tenant) if may_act else []
    if getattr(request, "htmx", False):
        html = render_card(card, tenant=tenant, may_act=may_act, targets=targets, message=message)
        return HttpResponse(html, status=status)
    context = {
        "tenant": tenant,
        "card": card,
        "may_act": may_act,
        "targets": targets,
        "message": message,
    }
    return render(request, "operator/case.html", context, status=status)
