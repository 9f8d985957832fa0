"""Tenants with a member in each role, and flagged turns stored the way the lab stores them."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User

from lab.accounts.models import Agent, Membership, Tenant
from lab.accounts.roles import Role
from lab.alerts.targets import parse_allowed_hosts
from lab.audit.imported import grade_transcript
from lab.audit.models import AuditRecord
from lab.audit.schema import AuditEntry
from lab.audit.services import audit_records_store
from lab.audit.transcript import parse_transcript
from lab.facts.loader import load_tenant
from lab.grading.grader import DeterministicGrader
from lab.operator.models import FlagCase
from tests.audit.calls import demo_calls, jsonl

FACTS = load_tenant("demo")
AT = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


def graded(lines: list[dict], *, agent: str = "demo-agent") -> list[AuditEntry]:
    turns = parse_transcript(jsonl(lines), max_bytes=1 << 20)
    return grade_transcript(
        turns,
        constraints=FACTS,
        tenant="demo",
        agent=agent,
        grader=DeterministicGrader(),
        graded_at=AT,
        timer=time.perf_counter,
    )


def one_call(call_id: str = "mixed") -> list[dict]:
    """Three of the demo calls' exchanges as one call: supported, unsupported, supported."""
    lines = demo_calls()[0]
    picked = lines[0:2] + lines[2:4] + lines[8:10]  # price0 (right), price1 (wrong), price4
    return [
        {**line, "call_id": call_id, "turn_id": f"{call_id}-t{n}"}
        for n, line in enumerate(picked, start=1)
    ]


def member(username: str, tenant: Tenant, role: Role) -> User:
    user = User.objects.create(username=username)
    Membership.objects.create(user=user, tenant=tenant, role=role.value)
    return user


@pytest.fixture(autouse=True)
def loopback_receivers(settings):
    """Endpoints here are loopback addresses, which alerts may reach only when it is named."""
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = parse_allowed_hosts("127.0.0.1")
    return settings


@pytest.fixture
def demo(db) -> Tenant:
    tenant = Tenant.objects.create(slug="demo", name="Demo")
    Agent.objects.create(tenant=tenant, slug="demo-agent")
    return tenant


@pytest.fixture
def members(demo) -> dict[Role, User]:
    return {role: member(f"{role.value}1", demo, role) for role in Role}


@pytest.fixture
def outsider(db) -> User:
    """The owner of another tenant, with flags of its own."""
    other = Tenant.objects.create(slug="acme")
    user = member("acme-owner", other, Role.OWNER)
    entries = [e.model_copy(update={"tenant": "acme"}) for e in graded(demo_calls()[0])]
    audit_records_store(entries)
    return user


@pytest.fixture
def flagged(demo) -> list[FlagCase]:
    """The demo calls stored as audit records: six of their twelve turns are flagged."""
    audit_records_store(graded(demo_calls()[0]))
    return list(FlagCase.objects.filter(tenant="demo").order_by("-record_id"))


def records_of(tenant: str) -> list[AuditRecord]:
    return list(AuditRecord.objects.filter(tenant=tenant).order_by("id"))
