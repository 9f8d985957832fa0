"""A registered agent's stable HTTP sandbox: one URL and one bearer token its team sets once.

A deployed staging bot cannot be reconfigured per run, so its tools point at
`/sandbox/agents/<tenant>/<slug>/tools/<name>` for good; each tool call is matched to the live
call of that agent it belongs to (lab.connectors.live_calls). The token is shown once when it
is issued and stored as its SHA-256; a refused tool call is counted on the agent, said in words.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.db.models import F

from lab.accounts.models import Agent

PREFIX = "/sandbox/agents/"
_REASON_CHARS = 300


def sandbox_path(tenant: str, slug: str) -> str:
    """The agent's sandbox, as its bot's tools are pointed at it (a tool's name follows)."""
    return f"{PREFIX}{tenant}/{slug}/tools/"


def owner_of(tenant: str, slug: str) -> str:
    """How a live call names the registered agent it is a call to."""
    return f"{tenant}/{slug}"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def sandbox_token_issue(*, agent: Agent) -> str:
    """A new token for the agent's sandbox (the old one stops working); the raw token is
    returned to be shown once and never stored."""
    token = "lsb_" + secrets.token_urlsafe(32)
    Agent.objects.filter(pk=agent.pk).update(sandbox_digest=_digest(token))
    return token


def sandbox_token_valid(tenant: str, slug: str, token: str) -> bool:
    found = (
        Agent.objects.filter(tenant__slug=tenant, slug=slug)
        .values_list("sandbox_digest", flat=True)
        .first()
    )
    return bool(found) and bool(token) and hmac.compare_digest(found or "", _digest(token))


def sandbox_refusal_record(*, tenant: str, slug: str, reason: str) -> None:
    Agent.objects.filter(tenant__slug=tenant, slug=slug).update(
        sandbox_refusals=F("sandbox_refusals") + 1, sandbox_last_refusal=reason[:_REASON_CHARS]
    )
