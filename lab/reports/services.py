"""The Django edge of reports: export a stored run, verify with this lab's state and the keys a
reader trusts, keep imports and pinned keys."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.utils import timezone

from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Event, Mode, RunStarted, TurnGraded
from lab.facts.errors import ConstraintListError
from lab.facts.loader import load_tenant, tenant_versions, tenants
from lab.facts.schema import ConstraintList
from lab.policy.gate import GATE_VERSION
from lab.reports.export import report_assemble
from lab.reports.keys import configured_trusted_keys, lab_private_key, lab_public_key
from lab.reports.models import ImportedReport, TrustedKey
from lab.reports.runtime import runtime_describe
from lab.reports.schema import Report
from lab.reports.signing import key_id, public_key_from_pem, public_key_pem
from lab.reports.verification import Verification, verify_report
from lab.runs.retrieval import tenant_constraints
from lab.scenarios.catalog import contract_get, known_contracts
from lab.scripted.dialogue import AGENT_VERSION


class ReportUnavailable(Exception):
    """A run whose report cannot be written truthfully."""


def _graded_against(events: list[Event]) -> ConstraintList:
    """The tenant list the run's grades name (the newest one when none is graded)."""
    newest = tenant_constraints()
    named = next(
        (
            e.payload.grade.constraint_list_version
            for e in events
            if isinstance(e.payload, TurnGraded)
        ),
        newest.version,
    )
    if named == newest.version:
        return newest
    number = named.rpartition("_v")[2]
    try:
        return load_tenant(newest.tenant, int(number))
    except (ValueError, ConstraintListError) as error:
        raise ReportUnavailable(
            f"its turns were graded against {named}, a list this lab no longer has ({error})"
        ) from None


def report_for_run(run: Run) -> Report:
    """The signed evidence report of a stored run, evaluated now."""
    contract = contract_get(run.scenario_id)
    if contract.contract_hash != run.contract_hash:
        raise ReportUnavailable(
            f"this run used a {run.scenario_id} contract (hash {run.contract_hash[:12]}…) that "
            "the lab no longer has, so it cannot embed the contract as run"
        )
    events = store.run_events(run)
    started = next((e.payload for e in events if isinstance(e.payload, RunStarted)), None)
    constraints = _graded_against(events)
    runtime = runtime_describe(
        mode=Mode(run.mode),
        channel=Channel(run.channel),
        gate_version=started.gate_version if started else GATE_VERSION,
        agent_version=started.agent_version if started else AGENT_VERSION,
        constraints=constraints,
    )
    return report_assemble(
        run_id=str(run.id),
        generated_at=timezone.now(),
        runtime=runtime,
        contract=contract,
        events=events,
        key=lab_private_key(),
        constraints=constraints,
    )


def trusted_keys(owner: str | None) -> tuple[Ed25519PublicKey, ...]:
    """The keys a reader trusts: the lab's configured ones and those their session pinned."""
    pinned = TrustedKey.objects.filter(owner=owner) if owner else TrustedKey.objects.none()
    return (
        *configured_trusted_keys(),
        *(public_key_from_pem(pin.public_key_pem.encode()) for pin in pinned),
    )


def trusted_key_pin(*, owner: str, name: str, key: Ed25519PublicKey) -> TrustedKey:
    """Pin key for owner under name; pinning it again renames it."""
    pin, _ = TrustedKey.objects.update_or_create(
        owner=owner,
        key_id=key_id(key),
        defaults={"name": name, "public_key_pem": public_key_pem(key)},
    )
    return pin


@functools.cache
def _constraint_lists() -> dict[str, ConstraintList]:
    """Every constraint list in fixtures/, by version id (read once: a new list is a new file)."""
    lists = [
        load_tenant(tenant, number) for tenant in tenants() for number in tenant_versions(tenant)
    ]
    return {listed.version: listed for listed in lists}


def report_verify(raw: bytes, *, trusted: Sequence[Ed25519PublicKey] = ()) -> Verification:
    """Every check, against this lab's canonical contracts, constraint lists and signing key."""
    return verify_report(
        raw,
        contracts=known_contracts(),
        lab_key=lab_public_key(),
        trusted_keys=trusted,
        constraint_lists=_constraint_lists(),
    )


def report_store(*, raw: bytes, filename: str, verification: Verification) -> ImportedReport | None:
    """Keep an uploaded report for replay, only if it is structurally a report."""
    report = verification.report
    if report is None:
        return None
    return ImportedReport.objects.create(
        filename=filename[:255],
        document=raw.decode("utf-8"),
        sha256=hashlib.sha256(raw).hexdigest(),
        run_id=report.run_id[:64],
        scenario_id=report.contract.id,
        event_count=len(report.events),
    )
