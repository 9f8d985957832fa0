"""Who is asking (a bearer token's user) and which tenant and agent they may read."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from ninja.security import HttpBearer

from lab.accounts import throttle
from lab.accounts.access import user_for_token
from lab.accounts.models import Agent, Membership
from lab.accounts.roles import Role
from lab.api.errors import ApiError
from lab.audit.models import AuditRecord
from lab.audit.schema import SLUG

log = logging.getLogger("lab.api.auth")


class BearerToken(HttpBearer):
    """`Authorization: Bearer TOKEN`: the token's user, or None (answered 401 by lab.api.errors).

    An address whose bad tokens passed the limit is refused (429) before any token is looked up.
    """

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        counters = throttle.api_counters(request)
        wait = throttle.retry_after(counters)
        if wait is not None:
            log.warning(
                "api token refused while locked: address=%s retry_after=%ds",
                throttle.client_address(request),
                wait,
            )
            raise ApiError(
                429,
                "too_many_requests",
                f"too many requests with a bad token from this address; retry in {wait} s",
                retry_after=wait,
            )
        user = user_for_token(token.strip())
        if user is None:
            throttle.failed(counters)
            log.warning("api token refused: address=%s", throttle.client_address(request))
        return user


@dataclass(frozen=True)
class TenantScope:
    tenant: str
    role: Role


def tenant_scope(user: Any, requested: str | None) -> TenantScope:
    """The tenant a request reads: the one named (a member's only), else the user's only one.

    Naming a tenant the user is not a member of is 404, as if it did not exist.
    """
    memberships = list(
        Membership.objects.filter(user_id=user.pk).select_related("tenant").order_by("tenant__slug")
    )
    slugs = [m.tenant.slug for m in memberships]
    if requested is not None and requested.strip():
        wanted = requested.strip()
        for found in memberships:
            if found.tenant.slug == wanted:
                return TenantScope(tenant=wanted, role=Role(found.role))
        raise ApiError(404, "not_found", f"no tenant {wanted[:64]!r} among yours")
    if not memberships:
        raise ApiError(403, "forbidden", "your account is not a member of any tenant")
    if len(memberships) > 1:
        raise ApiError(
            400,
            "ambiguous_tenant",
            f"you are a member of {len(slugs)} tenants; name one with ?tenant=",
            choices=slugs,
        )
    return TenantScope(tenant=slugs[0], role=Role(memberships[0].role))


def agent_in_tenant(tenant: str, agent: str) -> str:
    """The agent's slug if the tenant has it (registered, or with audit rows), else 404."""
    known = re.fullmatch(SLUG, agent) is not None and (
        Agent.objects.filter(tenant__slug=tenant, slug=agent).exists()
        or AuditRecord.objects.filter(tenant=tenant, agent=agent).exists()
    )
    if not known:
        raise ApiError(404, "not_found", f"no agent {agent[:64]!r} in tenant {tenant!r}")
    return agent
