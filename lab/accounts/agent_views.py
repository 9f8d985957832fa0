"""A tenant's registered agents under test (`/t/<tenant>/agents/`): list, add, edit, delete.

Every member reads the list; owners and admins change it (others get 403 on a change).
Anonymous visitors are sent to sign in, anyone else is told there is no such page (404), as
for a tenant that does not exist. A key's variable is shown by name, never with its value; an
agent's sandbox token is shown once, on the page that follows its issue, and never again.
"""

from __future__ import annotations

import json
import os
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.db import IntegrityError, transaction
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from pydantic import ValidationError

from lab.accounts.access import role_in
from lab.accounts.agent_forms import AgentForm, NewAgentForm
from lab.accounts.agent_sandbox import sandbox_path, sandbox_token_issue
from lab.accounts.agent_targets import CONNECTORS, secret_env_owned, tenant_secret_prefix
from lab.accounts.agents import secret_env_refusal
from lab.accounts.models import Agent, Tenant
from lab.accounts.roles import Role, can_manage
from lab.agent_tools.loading import MAX_BYTES

NOT_FOUND = "There is no such page."
FORBIDDEN = "Only the tenant's owners and admins change its agents."
FIELDS = ("name", "connector", "endpoint", "model", "secret_env", "tools")
# The session key that carries a just-issued sandbox token to the one page that shows it.
ISSUED = "agent_sandbox_issued"


def _read(
    form: type[AgentForm], post: QueryDict, tenant: str
) -> tuple[AgentForm | None, dict[str, str]]:
    """The posted form, or the message for each field that is wrong."""
    fields = {key: str(post.get(key, "")).strip() for key in (*FIELDS, "slug")}
    if form is AgentForm:
        fields.pop("slug")
    try:
        parsed = form.model_validate(fields, context={"tenant": tenant})
    except ValidationError as error:
        problems: dict[str, str] = {}
        for each in error.errors(include_url=False):
            field = str(each["loc"][0]) if each["loc"] else "connector"
            message = each["msg"].removeprefix("Value error, ")
            if each["type"] == "string_pattern_mismatch":
                message = "use lower-case letters, digits, - and _ (it names the agent in runs)"
            problems.setdefault(field, message)
        return None, problems
    if refusal := secret_env_refusal(parsed.secret_env, tenant):
        return None, {"secret_env": refusal}
    return parsed, {}


def _role(request: HttpRequest, tenant: str) -> Role | HttpResponse:
    """The member's role, or the answer for anyone who is not a member."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    role = role_in(request.user, tenant)
    if role is None:
        raise Http404(NOT_FOUND)
    return role


def _forbidden() -> HttpResponse:
    return HttpResponse(FORBIDDEN, status=403, content_type="text/plain; charset=utf-8")


def _listed(agent: Agent, tenant: str) -> dict[str, Any]:
    """What the page shows of an agent: whether its key's variable is set, never its value, and
    that only for a variable that is the tenant's own (of any other the page says nothing)."""
    owned = secret_env_owned(agent.secret_env, tenant)
    return {
        "agent": agent,
        "connector_label": CONNECTORS[agent.connector].label
        if agent.connector in CONNECTORS
        else agent.connector,
        "key_owned": owned,
        "key_set": owned and bool(os.environ.get(agent.secret_env)),
        "sandbox_path": sandbox_path(tenant, agent.slug),
    }


def _page(
    request: HttpRequest,
    tenant: str,
    role: Role,
    *,
    editing: Agent | None = None,
    values: dict[str, str] | None = None,
    errors: dict[str, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    agents = Agent.objects.filter(tenant__slug=tenant).order_by("slug")
    context = {
        "tenant": tenant,
        "role": role.value,
        "may_change": can_manage(role),
        "agents": [_listed(agent, tenant) for agent in agents],
        "connectors": [(name, kind.label) for name, kind in CONNECTORS.items()],
        "editing": editing,
        "values": values or {},
        "errors": errors or {},
        "secret_prefix": tenant_secret_prefix(tenant),
        "origin": request.build_absolute_uri("/").rstrip("/"),
        # Shown once: taken from the session as it is shown.
        "issued": request.session.pop(ISSUED, None),
    }
    return render(request, "accounts/agents.html", context, status=status)


def _posted(request: HttpRequest, errors: dict[str, str]) -> dict[str, str]:
    """The form's values to show again; a refused key's variable is not (it may be a key)."""
    values = {key: str(request.POST.get(key, "")).strip()[:500] for key in (*FIELDS, "slug")}
    values["tools"] = str(request.POST.get("tools", ""))[:MAX_BYTES]  # shown again whole
    if "secret_env" in errors:
        values["secret_env"] = ""
    return values


@require_http_methods(["GET", "HEAD", "POST"])
def agents_page(request: HttpRequest, tenant: str) -> HttpResponse:
    """GET lists the tenant's agents; POST registers one."""
    role = _role(request, tenant)
    if isinstance(role, HttpResponse):
        return role
    if request.method != "POST":
        return _page(request, tenant, role)
    if not can_manage(role):
        return _forbidden()
    form, errors = _read(NewAgentForm, request.POST, tenant)
    if not isinstance(form, NewAgentForm):
        values = _posted(request, errors)
        return _page(request, tenant, role, values=values, errors=errors, status=400)
    owner = get_object_or_404(Tenant, slug=tenant)
    try:
        with transaction.atomic():
            agent = Agent.objects.create(tenant=owner, **form.stored())
    except IntegrityError:
        taken = {"slug": f"{tenant} already has an agent {form.slug}"}
        values = _posted(request, taken)
        return _page(request, tenant, role, values=values, errors=taken, status=400)
    request.session[ISSUED] = {"slug": agent.slug, "token": sandbox_token_issue(agent=agent)}
    return redirect("agents_page", tenant=tenant)


@require_http_methods(["GET", "HEAD", "POST"])
def agent_edit(request: HttpRequest, tenant: str, slug: str) -> HttpResponse:
    """GET shows one agent's form (owners and admins); POST saves it. The slug stays: runs,
    audit rows and the API name the agent by it."""
    role = _role(request, tenant)
    if isinstance(role, HttpResponse):
        return role
    agent = get_object_or_404(Agent, tenant__slug=tenant, slug=slug)
    if not can_manage(role):
        return _forbidden()
    if request.method != "POST":
        values = {key: getattr(agent, key) for key in FIELDS}
        values["tools"] = json.dumps(agent.tools, indent=2) if agent.tools else ""
        return _page(request, tenant, role, editing=agent, values=values)
    form, errors = _read(AgentForm, request.POST, tenant)
    if form is None:
        values = _posted(request, errors)
        return _page(request, tenant, role, editing=agent, values=values, errors=errors, status=400)
    Agent.objects.filter(pk=agent.pk).update(**form.stored())
    return redirect("agents_page", tenant=tenant)


@require_POST
def agent_sandbox_token(request: HttpRequest, tenant: str, slug: str) -> HttpResponse:
    """Issue the agent's sandbox a new token (the old one stops working), shown once."""
    role = _role(request, tenant)
    if isinstance(role, HttpResponse):
        return role
    agent = get_object_or_404(Agent, tenant__slug=tenant, slug=slug)
    if not can_manage(role):
        return _forbidden()
    request.session[ISSUED] = {"slug": agent.slug, "token": sandbox_token_issue(agent=agent)}
    return redirect("agents_page", tenant=tenant)


@require_POST
def agent_delete(request: HttpRequest, tenant: str, slug: str) -> HttpResponse:
    """Unregister an agent; its runs and audit rows stay under its name."""
    role = _role(request, tenant)
    if isinstance(role, HttpResponse):
        return role
    agent = get_object_or_404(Agent, tenant__slug=tenant, slug=slug)
    if not can_manage(role):
        return _forbidden()
    agent.delete()
    return redirect("agents_page", tenant=tenant)
