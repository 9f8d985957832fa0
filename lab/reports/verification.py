"""Verifying a report without trusting what it says about itself.

Six checks run in order: structure, contract, integrity, origin, re-evaluation, re-grade. The
verdict and every turn's grade are derived anew from the events; the file's own are only
compared, and origin is a result of its own beside consistency. Pure: no Django, no I/O, no
clock; the caller passes the canonical contracts and the keys.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Evaluation
from lab.events.types import RunStarted
from lab.facts.schema import ConstraintList
from lab.reports.canonical import body_digest
from lab.reports.differences import as_text, tree_differences
from lab.reports.findings import Finding
from lab.reports.integrity import check_integrity
from lab.reports.origin import check_origin
from lab.reports.regrade import check_regrade
from lab.reports.results import (
    Check,
    CheckResult,
    ContractStatus,
    Difference,
    Origin,
    Status,
    Verification,
    capped,
    short,
)
from lab.reports.schema import Report
from lab.reports.structure import MAX_REPORT_BYTES, Parsed, report_parse
from lab.reports.tools import tool_identities
from lab.scenarios.contracts import Contract, contract_hash

__all__ = [
    "Check",
    "CheckResult",
    "ContractStatus",
    "Difference",
    "Origin",
    "Status",
    "Verification",
    "check_contract",
    "check_integrity",
    "check_origin",
    "check_reevaluation",
    "check_regrade",
    "verify_report",
]


def _first_run_started(report: Report) -> tuple[str, RunStarted] | None:
    for event in report.events:
        if isinstance(event.payload, RunStarted):
            return event.id, event.payload
    return None


def check_contract(
    report: Report, contracts: Mapping[str, Contract]
) -> tuple[CheckResult, ContractStatus, Contract]:
    """The embedded contract against the lab's canonical one; returns the contract to judge by."""
    embedded = report.contract
    canonical = contracts.get(embedded.id)
    findings: list[Finding] = []
    named = f"{embedded.id} v{embedded.version}"
    if canonical is None:
        status, used = ContractStatus.UNKNOWN_ID, embedded
        known = ", ".join(sorted(contracts)) or "none"
        findings.append(
            Finding(
                "contract_unknown",
                f"this lab has no scenario {embedded.id!r} (it has {known}); the verdict is "
                "derived with the contract the file embeds, which nothing here vouches for",
                blocking=False,
            )
        )
    elif canonical.version != embedded.version:
        status, used = ContractStatus.UNKNOWN_VERSION, embedded
        findings.append(
            Finding(
                "contract_version_unknown",
                f"this lab has {embedded.id} v{canonical.version}, not v{embedded.version}; the "
                "verdict is derived with the contract the file embeds",
                blocking=False,
            )
        )
    else:
        used = canonical
        changed = list(
            tree_differences(
                "contract", embedded.model_dump(mode="json"), canonical.model_dump(mode="json")
            )
        )
        status = ContractStatus.CHANGED if changed else ContractStatus.IDENTICAL
        if changed:
            paths = ", ".join(d.path for d in changed[:5])
            more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
            findings.append(
                Finding(
                    "contract_changed",
                    f"the embedded {named} differs from this lab's canonical {named} at "
                    f"{paths}{more}; the verdict is derived with the canonical one",
                )
            )
    actual = contract_hash(embedded)
    if report.contract_hash != actual:
        findings.append(
            Finding(
                "contract_hash_mismatch",
                f"contract_hash states {short(report.contract_hash)}, the embedded contract "
                f"hashes to {short(actual)}",
            )
        )
    started = _first_run_started(report)
    if started is None:
        findings.append(
            Finding(
                "no_run_started",
                "the log has no run.started, so no event names the contract the run used",
                blocking=False,
            )
        )
    else:
        event_id, payload = started
        ran = (payload.scenario_id, payload.scenario_version, payload.contract_hash)
        if ran != (embedded.id, embedded.version, actual):
            findings.append(
                Finding(
                    "run_started_mismatch",
                    f"{event_id} says the run used {payload.scenario_id} "
                    f"v{payload.scenario_version} (hash {short(payload.contract_hash)}), not the "
                    f"embedded {named} (hash {short(actual)})",
                )
            )
    summaries = {
        ContractStatus.IDENTICAL: f"identical to this lab's {named} (hash {short(actual)})",
        ContractStatus.CHANGED: f"changed: the embedded {named} is not this lab's {named}",
        ContractStatus.UNKNOWN_VERSION: f"unknown version: this lab does not have {named}",
        ContractStatus.UNKNOWN_ID: f"unknown: this lab has no scenario {embedded.id!r}",
    }
    return CheckResult(Check.CONTRACT, summaries[status], tuple(findings)), status, used


def _evaluation_differences(stated: Evaluation, derived: Evaluation) -> Iterator[Difference]:
    if stated.verdict != derived.verdict:
        yield Difference("verdict", stated.verdict, derived.verdict)
    stated_ids = [a.id for a in stated.assertions]
    derived_ids = [a.id for a in derived.assertions]
    if stated_ids != derived_ids:
        yield Difference("assertion ids", as_text(stated_ids), as_text(derived_ids))
    by_id = {a.id: a for a in stated.assertions}
    for result in derived.assertions:
        if (claimed := by_id.get(result.id)) is not None:
            yield from tree_differences(
                f"assertions[{result.id}]",
                claimed.model_dump(mode="json"),
                result.model_dump(mode="json"),
            )
    rest = {"verdict", "assertions"}
    yield from tree_differences(
        "evaluation",
        stated.model_dump(mode="json", exclude=rest),
        derived.model_dump(mode="json", exclude=rest),
    )


def _runtime_differences(report: Report) -> Iterator[Difference]:
    """What the runtime block and the run's own run.started must agree on."""
    runtime = report.runtime
    if runtime.evaluator_version != report.evaluation.evaluator_version:
        yield Difference(
            "runtime.evaluator_version",
            runtime.evaluator_version,
            f"{report.evaluation.evaluator_version} (the evaluation's)",
        )
    started = _first_run_started(report)
    if started is None:
        return
    event_id, payload = started
    pairs = {
        "run_id": (report.run_id, payload.run_id),
        "runtime.mode": (runtime.mode, payload.mode),
        "runtime.channel": (runtime.channel, payload.channel),
        "runtime.gate_version": (runtime.gate_version, payload.gate_version),
        "runtime.agent_version": (runtime.agent_version, payload.agent_version),
    }
    for path, (claimed, recorded) in pairs.items():
        if claimed != recorded:
            yield Difference(path, str(claimed), f"{recorded} ({event_id})")


def _difference_kind(path: str) -> str:
    for prefix, kind in (
        ("verdict", "verdict_differs"),
        ("assertion", "assertion_differs"),
        ("tools", "tools_differ"),
        ("evaluation", "evaluation_differs"),
    ):
        if path.startswith(prefix):
            return kind
    return "runtime_differs"


def check_reevaluation(
    report: Report, contract: Contract, source: Literal["canonical", "embedded"]
) -> tuple[CheckResult, Evaluation, tuple[Difference, ...]]:
    """evaluate() anew from the events, compared with everything the file derived from them."""
    derived = evaluate(contract, report.events)
    differences = (
        *_evaluation_differences(report.evaluation, derived),
        *tree_differences(
            "tools",
            report.tools.model_dump(mode="json"),
            tool_identities(report.events).model_dump(mode="json"),
        ),
        *_runtime_differences(report),
    )
    findings = [
        Finding(
            _difference_kind(d.path),
            f"{d.path}: the file states {d.stated}, the events give {d.derived}",
        )
        for d in differences
    ]
    basis = f"derived anew from {len(report.events)} events with the {source} contract"
    if findings:
        summary = f"{derived.verdict} {basis}; {len(differences)} difference(s) from the file"
    else:
        summary = (
            f"{derived.verdict} {basis}; it matches the file's verdict, "
            f"{len(derived.assertions)} assertion states and tool identities"
        )
    return CheckResult(Check.REEVALUATION, summary, capped(findings)), derived, differences


def _guarded(check: Check, run: Callable[[], CheckResult]) -> CheckResult:
    """A check that ends in a finding instead of an exception: no input may crash an import."""
    try:
        return run()
    except Exception as error:
        reason = f"the check could not complete ({type(error).__name__}: {error})"[:300]
        return CheckResult(check, "could not complete", (Finding("check_error", reason),))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector while verifying."""
    # A report's values form no cycles, yet allocating millions of them triggers collections
    # that cost more than the verification itself (six times over at 100,000 events).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def verify_report(
    raw: bytes,
    *,
    contracts: Mapping[str, Contract],
    lab_key: Ed25519PublicKey | None,
    trusted_keys: Sequence[Ed25519PublicKey] = (),
    max_bytes: int | None = MAX_REPORT_BYTES,
    constraint_lists: Mapping[str, ConstraintList] | None = None,
) -> Verification:
    """Every check on raw, in order; a file that fails structure gets no further.

    constraint_lists: this lab's lists by version, which an embedded list must match.
    """
    with _collector_paused():
        return _verify(raw, contracts, lab_key, trusted_keys, max_bytes, constraint_lists or {})


def _verify(
    raw: bytes,
    contracts: Mapping[str, Contract],
    lab_key: Ed25519PublicKey | None,
    trusted_keys: Sequence[Ed25519PublicKey],
    max_bytes: int | None,
    constraint_lists: Mapping[str, ConstraintList],
) -> Verification:
    parsed = report_parse(raw, max_bytes=max_bytes)
    if not isinstance(parsed, Parsed):
        refused = [CheckResult(Check.STRUCTURE, "not a readable report", tuple(parsed))]
        refused += [
            CheckResult(check, "not run: the structure check failed", ran=False)
            for check in list(Check)[1:]
        ]
        return Verification(checks=tuple(refused))
    report = parsed.report
    structure = CheckResult(
        Check.STRUCTURE,
        f"a schema version {report.schema_version} report of {len(report.events)} events",
    )
    outcome: dict[str, Any] = {}

    def contract() -> CheckResult:
        result, outcome["status"], outcome["contract"] = check_contract(report, contracts)
        return result

    try:
        digest: str | Exception = body_digest(parsed.document)
    except Exception as error:  # an integer outside RFC 8785's domain, say
        digest = error

    def origin() -> CheckResult:
        result, outcome["origin"] = check_origin(
            report, digest, lab_key=lab_key, trusted_keys=trusted_keys
        )
        return result

    def reevaluation() -> CheckResult:
        known = outcome.get("status") in (ContractStatus.IDENTICAL, ContractStatus.CHANGED)
        source: Literal["canonical", "embedded"] = "canonical" if known else "embedded"
        outcome["source"] = source
        judged_by = outcome.get("contract", report.contract)
        result, outcome["derived"], outcome["differences"] = check_reevaluation(
            report, judged_by, source
        )
        return result

    def regrade() -> CheckResult:
        result, outcome["regrade"] = check_regrade(report, constraint_lists)
        return result

    checks = (
        structure,
        _guarded(Check.CONTRACT, contract),
        _guarded(Check.INTEGRITY, lambda: check_integrity(parsed, digest)),
        _guarded(Check.ORIGIN, origin),
        _guarded(Check.REEVALUATION, reevaluation),
        _guarded(Check.REGRADE, regrade),
    )
    return Verification(
        checks=checks,
        report=report,
        contract_status=outcome.get("status"),
        contract_source=outcome.get("source"),
        contract_used=outcome.get("contract", report.contract),
        derived=outcome.get("derived"),
        differences=outcome.get("differences", ()),
        origin=outcome.get("origin"),
        regrade=outcome.get("regrade"),
    )
