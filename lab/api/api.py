"""The audit APIs under /api/: per agent (every member) and the tenant rollup (owner and admin).

Spec at /api/openapi.json, docs at /api/docs; every answer is scoped to the token user's tenant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.http import HttpRequest
from django.utils import timezone
from ninja import NinjaAPI, Query

from lab.accounts.roles import can_view, can_view_rollup
from lab.api import errors
from lab.api.cursor import BadCursor, cursor_decode, cursor_encode
from lab.api.errors import ApiError, Problem
from lab.api.rollup import tenant_rollup
from lab.api.rollup_fold import DEFAULT_DAYS, MAX_DAYS
from lab.api.schemas import GraderPage, GroundingPage, Rollup, grader_row, grounding_row
from lab.api.scope import BearerToken, TenantScope, agent_in_tenant, tenant_scope
from lab.audit.models import AuditRecord
from lab.audit.selectors import MAX_LIMIT, audit_record_out, audit_records_for_agent

DEFAULT_LIMIT = 50
DEFAULT_TRIAGE = 20
Row = TypeVar("Row")
ERRORS = {400: Problem, 401: Problem, 403: Problem, 404: Problem}

api = NinjaAPI(
    title="Voice Reliability Lab audit API",
    version="1",
    description=(
        "Per-turn audit rows (grounding and grader verdicts) per agent, and the tenant rollup. "
        "Send `Authorization: Bearer TOKEN`: create a token signed in at `/accounts/tokens/`, "
        "or from a shell with `manage.py createtoken USER`. Every error is a "
        "JSON problem with a stable `code`."
    ),
    auth=BearerToken(),
    urls_namespace="api",
)
errors.install(api)

LimitQuery = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description=f"rows per page, 1-{MAX_LIMIT}")
CursorQuery = Query(None, description="next_cursor of the previous page")
TenantQuery = Query(None, description="the tenant, for a member of several", max_length=64)


def _member(request: HttpRequest, tenant: str | None) -> TenantScope:
    scope = tenant_scope(request.auth, tenant)  # type: ignore[attr-defined]
    if not can_view(scope.role):
        raise ApiError(403, "forbidden", f"a {scope.role} may not read the audit")
    return scope


def _agent_page(
    request: HttpRequest,
    agent: str,
    *,
    limit: int,
    cursor: str | None,
    tenant: str | None,
    row: Callable[[AuditRecord], Row],
) -> tuple[TenantScope, list[Row], str | None]:
    """One page of an agent's rows, newest first, and the cursor that continues it."""
    scope = _member(request, tenant)
    agent_in_tenant(scope.tenant, agent)
    try:
        before = None if cursor is None else cursor_decode(cursor)
    except BadCursor as exc:
        raise ApiError(400, "invalid_cursor", str(exc)) from None
    records = audit_records_for_agent(tenant=scope.tenant, agent=agent, limit=limit, before=before)
    more = bool(records) and bool(
        audit_records_for_agent(tenant=scope.tenant, agent=agent, limit=1, before=records[-1].id)
    )
    return scope, [row(r) for r in records], cursor_encode(records[-1].id) if more else None


@api.get(
    "/agents/grounding-citations-audit",
    response={200: Rollup, **ERRORS},
    summary="Tenant rollup (owner and admin)",
    tags=["rollup"],
)
def rollup(
    request: HttpRequest,
    days: int = Query(DEFAULT_DAYS, ge=1, le=MAX_DAYS, description=f"UTC days, 1-{MAX_DAYS}"),
    limit: int = Query(DEFAULT_TRIAGE, ge=1, le=MAX_LIMIT, description="triage list length"),
    tenant: str | None = TenantQuery,
) -> Rollup:
    """Every agent's turns over the last `days` days: totals, per agent, per day, and triage."""
    scope = tenant_scope(request.auth, tenant)  # type: ignore[attr-defined]
    if not can_view_rollup(scope.role):
        raise ApiError(403, "forbidden", f"the rollup is for owners and admins, not a {scope.role}")
    return tenant_rollup(scope.tenant, days=days, triage_limit=limit, today=timezone.now().date())


@api.get(
    "/agents/{agent}/grounding-citations-audit",
    response={200: GroundingPage, **ERRORS},
    summary="An agent's grounding audit, newest first",
    tags=["agents"],
)
def grounding_citations_audit(
    request: HttpRequest,
    agent: str,
    limit: int = LimitQuery,
    cursor: str | None = CursorQuery,
    tenant: str | None = TenantQuery,
) -> GroundingPage:
    """Per turn: the retrieved chunks with scores, the markers cited, the verdict, the versions."""
    scope, items, next_cursor = _agent_page(
        request,
        agent,
        limit=limit,
        cursor=cursor,
        tenant=tenant,
        row=lambda record: grounding_row(audit_record_out(record)),
    )
    return GroundingPage(
        tenant=scope.tenant, agent=agent, limit=limit, items=items, next_cursor=next_cursor
    )


@api.get(
    "/agents/{agent}/grader-verdicts",
    response={200: GraderPage, **ERRORS},
    summary="An agent's grader verdicts, newest first",
    tags=["agents"],
)
def grader_verdicts(
    request: HttpRequest,
    agent: str,
    limit: int = LimitQuery,
    cursor: str | None = CursorQuery,
    tenant: str | None = TenantQuery,
) -> GraderPage:
    """Per turn: verdict, claim, constraint refs, rationale, confidence, category, severity."""
    scope, items, next_cursor = _agent_page(
        request,
        agent,
        limit=limit,
        cursor=cursor,
        tenant=tenant,
        row=lambda record: grader_row(audit_record_out(record)),
    )
    return GraderPage(
        tenant=scope.tenant, agent=agent, limit=limit, items=items, next_cursor=next_cursor
    )
