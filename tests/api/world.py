"""Two tenants with audit rows, one member per role, and the tokens each caller sends.

acme has agents front-desk and after-hours; globex has its own front-desk (the same slug) and
globex-bot. Rows are graded from the audit tests' demo calls, spread over the last days.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache

from django.contrib.auth.models import User

from lab.accounts.access import issue_token, revoke_token
from lab.accounts.models import Agent, Membership, Tenant
from lab.audit.imported import grade_transcript
from lab.audit.schema import AuditEntry
from lab.audit.services import audit_records_store
from lab.audit.transcript import parse_transcript
from lab.facts.loader import load_tenant
from lab.grading.grader import DeterministicGrader
from tests.audit.calls import demo_calls, jsonl

ROLES = ("owner", "admin", "operator", "viewer")
AGENTS = {"acme": ("front-desk", "after-hours"), "globex": ("front-desk", "globex-bot")}


@cache
def graded() -> tuple[AuditEntry, ...]:
    """The demo calls' agent turns, graded once (each verdict and grounding verdict occurs)."""
    turns = parse_transcript(jsonl(demo_calls()[0]), max_bytes=1 << 20)
    return tuple(
        grade_transcript(
            turns,
            constraints=load_tenant("demo"),
            tenant="demo",
            agent="front-desk",
            grader=DeterministicGrader(),
            graded_at=datetime(2026, 1, 1, tzinfo=UTC),
            timer=time.perf_counter,
        )
    )


@dataclass
class World:
    tokens: dict[str, str] = field(default_factory=dict)  # caller -> raw token
    users: dict[str, User] = field(default_factory=dict)
    # (tenant, agent) -> ids, newest first
    ids: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    def header(self, caller: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[caller]}"} if caller in self.tokens else {}


def rows(tenant: str, agent: str, *, copies: int, now: datetime) -> list[AuditEntry]:
    """copies x the graded turns for one agent, copy k graded k days ago."""
    return [
        entry.model_copy(
            update={
                "tenant": tenant,
                "agent": agent,
                "call_id": f"{agent}-{copy}-{entry.call_id}",
                "turn_id": f"{agent}-{copy}-{entry.turn_id}",
                "graded_at": now - timedelta(days=copy, minutes=index),
            }
        )
        for copy in range(copies)
        for index, entry in enumerate(graded())
    ]


def build(now: datetime, copies: int = 3) -> World:
    world = World()
    for slug, agents in AGENTS.items():
        tenant = Tenant.objects.create(slug=slug)
        for agent in agents:
            Agent.objects.create(tenant=tenant, slug=agent)
            stored = audit_records_store(rows(slug, agent, copies=copies, now=now))
            world.ids[(slug, agent)] = sorted((r.id for r in stored.records), reverse=True)
        for role in ROLES:
            _member(world, f"{slug}-{role}", {tenant: role})
    _member(
        world,
        "both",
        {Tenant.objects.get(slug="acme"): "owner", Tenant.objects.get(slug="globex"): "viewer"},
    )
    _member(world, "nobody", {})
    revoked = world.users["acme-owner"]
    raw = issue_token(revoked, name="old")
    revoke_token(raw[:12], user=revoked)
    world.tokens["revoked"] = raw
    world.tokens["bad"] = "vrl_not-a-token-anyone-was-given"
    return world


def _member(world: World, username: str, roles: dict[Tenant, str]) -> None:
    user = User.objects.create_user(username=username)  # no password: hashing one is slow
    for tenant, role in roles.items():
        Membership.objects.create(user=user, tenant=tenant, role=role)
    world.users[username] = user
    world.tokens[username] = issue_token(user, name="test")
