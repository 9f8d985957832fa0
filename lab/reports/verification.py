"""Verifying a report without trusting what it says about itself.

Five checks run in order: structure, contract, integrity, origin, re-evaluation. The verdict
is always the one derived anew from the events; the file's own verdict is only compared.
Pure: no Django, no I/O, no clock; the caller passes the canonical contracts and the keys.
"""

from __future__ import annotations

import gc
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Evaluation, Verdict
from lab.events.chain import GENESIS_HASH, digest, event_body
from lab.events.types import RunStarted, event_id_for
from lab.reports.canonical import body_digest
from lab.reports.findings import Finding
from lab.reports.schema import Report
from lab.reports.signing import (
    ORIGIN_DOES_NOT_PROVE,
    ORIGIN_PROVES,
    KeyProblem,
    key_id,
    public_key_from_pem,
    public_key_pem,
    raw_public_key,
    signature_bytes,
    signature_verifies,
)
from lab.reports.structure import MAX_REPORT_BYTES, Parsed, report_parse
from lab.reports.tools import tool_identities
from lab.scenarios.contracts import Contract, contract_hash

# Integrity findings beyond this many are counted, not listed (a forged log can break them all).
MAX_LISTED_FINDINGS = 50
_SHOWN = 12  # hex digits of a hash shown in a reason


class Check(StrEnum):
    STRUCTURE = "structure"
    CONTRACT = "contract"
    INTEGRITY = "integrity"
    ORIGIN = "origin"
    REEVALUATION = "re-evaluation"


class Status(StrEnum):
    OK = "ok"
    NOTICE = "notice"
    FAILED = "failed"
    NOT_RUN = "not run"


class ContractStatus(StrEnum):
    IDENTICAL = "identical"
    CHANGED = "changed"
    UNKNOWN_VERSION = "unknown version"
    UNKNOWN_ID = "unknown scenario"


class Origin(StrEnum):
    VALID_LAB = "valid (this lab)"
    VALID_SUPPLIED = "valid (your key)"
    UNKNOWN_KEY = "by an unknown key"
    INVALID = "invalid"
    ABSENT = "absent"


@dataclass(frozen=True, slots=True)
class CheckResult:
    check: Check
    summary: str
    findings: tuple[Finding, ...] = ()
    ran: bool = True

    @property
    def status(self) -> Status:
        if not self.ran:
            return Status.NOT_RUN
        if any(f.blocking for f in self.findings):
            return Status.FAILED
        return Status.NOTICE if self.findings else Status.OK

    @property
    def number(self) -> int:
        return list(Check).index(self.check) + 1


@dataclass(frozen=True, slots=True)
class Difference:
    """One value the file states beside the value derived from its events."""

    path: str
    stated: str
    derived: str


@dataclass(frozen=True)
class Verification:
    checks: tuple[CheckResult, ...]
    report: Report | None = None
    contract_status: ContractStatus | None = None
    contract_source: Literal["canonical", "embedded"] | None = None
    contract_used: Contract | None = None
    derived: Evaluation | None = None
    differences: tuple[Difference, ...] = ()
    origin: Origin | None = None

    @property
    def rejected(self) -> bool:
        """Structure failed: the file could not be read as a report at all."""
        return self.report is None

    @property
    def consistent(self) -> bool:
        return not self.rejected and not any(
            f.blocking for check in self.checks for f in check.findings
        )

    @property
    def verdict(self) -> Verdict | None:
        """The re-derived verdict; never the one the file states."""
        return self.derived.verdict if self.derived else None

    def check(self, check: Check) -> CheckResult:
        return next(result for result in self.checks if result.check is check)

    def problems(self) -> list[str]:
        """The first blocking finding of each failed check, as 'check: reason'."""
        return [
            f"{result.check}: {next(f.reason for f in result.findings if f.blocking)}"
            for result in self.checks
            if result.status is Status.FAILED
        ]

    def summary(self, name: str) -> str:
        """The one line a person reads first: consistent or not, verdict, signature."""
        if self.rejected:
            return f"{name}: REJECTED ({'; '.join(self.problems())})"
        tail = f"signature {self.origin}"
        if self.contract_source == "embedded":
            tail += ", contract unknown to this lab (verdict derived with the embedded one)"
        if self.consistent:
            return f"{name}: consistent, verdict {self.verdict}, {tail}"
        problems = "; ".join(self.problems())
        return f"{name}: INCONSISTENT ({problems}), re-derived verdict {self.verdict}, {tail}"


def _short(digest: str) -> str:
    return f"{digest[:_SHOWN]}…"


def _capped(findings: list[Finding]) -> tuple[Finding, ...]:
    if len(findings) <= MAX_LISTED_FINDINGS:
        return tuple(findings)
    more = len(findings) - MAX_LISTED_FINDINGS
    return (*findings[:MAX_LISTED_FINDINGS], Finding("more", f"and {more:,} more like these"))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value) if value else "(none)"
    return json.dumps(value, ensure_ascii=False)


def _tree_differences(path: str, stated: Any, derived: Any) -> Iterator[Difference]:
    """The leaves where two JSON values differ; lists of unequal length differ as a whole."""
    if stated == derived and type(stated) is type(derived):
        return
    if isinstance(stated, dict) and isinstance(derived, dict):
        for key in [*stated, *(k for k in derived if k not in stated)]:
            yield from _tree_differences(
                f"{path}.{key}", stated.get(key, "(absent)"), derived.get(key, "(absent)")
            )
    elif isinstance(stated, list) and isinstance(derived, list) and len(stated) == len(derived):
        is_ids = all(isinstance(item, str) for item in stated + derived)
        if is_ids:
            yield Difference(path, _text(stated), _text(derived))
            return
        for index, (left, right) in enumerate(zip(stated, derived, strict=True)):
            yield from _tree_differences(f"{path}[{index}]", left, right)
    else:
        yield Difference(path, _text(stated), _text(derived))


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
            _tree_differences(
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
                f"contract_hash states {_short(report.contract_hash)}, the embedded contract "
                f"hashes to {_short(actual)}",
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
                    f"v{payload.scenario_version} (hash {_short(payload.contract_hash)}), not the "
                    f"embedded {named} (hash {_short(actual)})",
                )
            )
    summaries = {
        ContractStatus.IDENTICAL: f"identical to this lab's {named} (hash {_short(actual)})",
        ContractStatus.CHANGED: f"changed: the embedded {named} is not this lab's {named}",
        ContractStatus.UNKNOWN_VERSION: f"unknown version: this lab does not have {named}",
        ContractStatus.UNKNOWN_ID: f"unknown: this lab has no scenario {embedded.id!r}",
    }
    return CheckResult(Check.CONTRACT, summaries[status], tuple(findings)), status, used


def _chain_findings(report: Report) -> Iterator[Finding]:
    previous_hash, previous_id, highest = GENESIS_HASH, "the genesis hash", 0
    repeats = {i: n for i, n in Counter(e.id for e in report.events).items() if n > 1}
    for event in report.events:
        if event.seq > highest + 1:
            last = event.seq - 1
            gap = f"{last}" if last == highest + 1 else f"{highest + 1} to {last}"
            yield Finding("seq_gap", f"seq gap: seq {gap} missing before {event.id}")
        elif event.seq <= highest:
            yield Finding(
                "seq_order",
                f"seq out of order: {event.id} (seq {event.seq}) comes after seq {highest}",
            )
        if event.id != event_id_for(event.seq):
            yield Finding(
                "event_id",
                f"event {event.id} has seq {event.seq}, so its id should be "
                f"{event_id_for(event.seq)}",
            )
        if event.id in repeats:
            yield Finding(
                "duplicate_event_id", f"event id {event.id} appears {repeats.pop(event.id)} times"
            )
        if event.prev_hash != previous_hash:
            yield Finding(
                "chain_break",
                f"event {event.id} does not chain: its prev_hash is not the hash of {previous_id}",
            )
        try:
            recomputed = digest(event_body(event))
        except Exception as error:  # an integer outside RFC 8785's domain, say
            yield Finding("not_canonical", f"event {event.id} cannot be hashed: {error}")
        else:
            if recomputed != event.hash:
                yield Finding(
                    "event_hash",
                    f"event {event.id} hash mismatch (its content hashes to "
                    f"{_short(recomputed)}, it states {_short(event.hash)})",
                )
        # Chain on from the stated hash, so one edited event is reported once, not at every link.
        previous_hash, previous_id, highest = event.hash, event.id, max(highest, event.seq)


def check_integrity(parsed: Parsed, recomputed_digest: str | Exception) -> CheckResult:
    """The hash chain from GENESIS_HASH with gapless seq, then the digest of the whole body."""
    report = parsed.report
    findings = list(_chain_findings(report))
    stated = report.integrity.body_digest
    if isinstance(recomputed_digest, Exception):
        findings.append(
            Finding("not_canonical", f"the body has no canonical JSON form: {recomputed_digest}")
        )
    elif recomputed_digest != stated:
        findings.append(
            Finding(
                "body_digest",
                f"body digest mismatch (the body hashes to {_short(recomputed_digest)}, the file "
                f"states {_short(stated)}): something was changed after the digest was taken",
            )
        )
    count = len(report.events)
    summary = (
        f"{count} events chained from the genesis hash, seq 1 to {count} without gaps; "
        f"body digest {_short(stated)} matches"
        if not findings
        else f"{len(findings)} problem(s) in the hash chain or body digest"
    )
    return CheckResult(Check.INTEGRITY, summary, _capped(findings))


def _verifies(key: Ed25519PublicKey | None, signature: bytes, digest: str) -> bool:
    return key is not None and signature_verifies(key, signature, digest)


def _same_key(a: Ed25519PublicKey, b: Ed25519PublicKey | None) -> bool:
    return b is not None and raw_public_key(a) == raw_public_key(b)


def check_origin(
    report: Report,
    recomputed_digest: str | Exception,
    *,
    lab_key: Ed25519PublicKey | None,
    supplied_key: Ed25519PublicKey | None,
) -> tuple[CheckResult, Origin]:
    """Who signed exactly this body: this lab, the key the user supplied, someone else, nobody."""
    signature = report.signature
    if signature is None:
        finding = Finding(
            "unsigned",
            "the report carries no signature, so nothing says which lab instance wrote it",
            blocking=False,
        )
        return CheckResult(Check.ORIGIN, "absent", (finding,)), Origin.ABSENT
    try:
        named = public_key_from_pem(signature.public_key_pem.encode())
    except KeyProblem as error:
        finding = Finding("bad_public_key", f"the public key the report names is unusable: {error}")
        return CheckResult(Check.ORIGIN, "invalid", (finding,)), Origin.INVALID
    findings: list[Finding] = []
    named_id = key_id(named)
    if public_key_pem(named) != signature.public_key_pem:
        # The signature does not cover this block, so only one spelling of the key may pass.
        findings.append(
            Finding("key_not_canonical", "the named public key is not in its canonical PEM form")
        )
    if named_id != signature.key_id:
        findings.append(
            Finding(
                "key_id_mismatch",
                f"key id {_short(signature.key_id)} does not name the embedded public key "
                f"(whose id is {_short(named_id)})",
            )
        )
    value = signature_bytes(signature.value)
    if value is None or isinstance(recomputed_digest, Exception):
        why = (
            "is not 64 bytes in canonical base64"
            if value is None
            else "covers a body that cannot be read"
        )
        findings.append(Finding("signature_malformed", f"the signature {why}"))
        return CheckResult(Check.ORIGIN, "invalid", tuple(findings)), Origin.INVALID
    if not signature_verifies(named, value, recomputed_digest):
        by_lab = _verifies(lab_key, value, recomputed_digest)
        if by_lab or _verifies(supplied_key, value, recomputed_digest):
            whose = "this lab's key" if by_lab else "the key you supplied"
            findings.append(
                Finding(
                    "key_swapped",
                    f"the signature does not verify with the key the report names (id "
                    f"{_short(named_id)}) but does with {whose}: the named key was swapped",
                )
            )
        else:
            tried = ["the key the report names", "this lab's key" if lab_key else None]
            tried.append("the key you supplied" if supplied_key else None)
            findings.append(
                Finding(
                    "signature_invalid",
                    f"the signature does not verify over this body with "
                    f"{' or '.join(t for t in tried if t)}: the body or the signature was "
                    "changed after signing",
                )
            )
        return CheckResult(Check.ORIGIN, "invalid", tuple(findings)), Origin.INVALID
    meaning = f"it proves {ORIGIN_PROVES}; it does not prove {ORIGIN_DOES_NOT_PROVE}"
    if _same_key(named, lab_key):
        origin = Origin.VALID_LAB
        summary = f"valid for this lab's key (id {_short(named_id)}): {meaning}"
    elif _same_key(named, supplied_key):
        origin = Origin.VALID_SUPPLIED
        summary = f"valid for the key you supplied (id {_short(named_id)}): " + meaning.replace(
            "this lab instance's key", "the holder of that key"
        )
    else:
        origin, summary = Origin.UNKNOWN_KEY, f"signed by an unknown key (id {_short(named_id)})"
        findings.append(
            Finding(
                "unknown_key",
                "the key is neither this lab's nor one you supplied: the signature proves only "
                "that whoever holds that key signed these bytes",
                blocking=False,
            )
        )
    if any(f.blocking for f in findings):
        origin, summary = Origin.INVALID, "invalid"
    return CheckResult(Check.ORIGIN, summary, tuple(findings)), origin


def _evaluation_differences(stated: Evaluation, derived: Evaluation) -> Iterator[Difference]:
    if stated.verdict != derived.verdict:
        yield Difference("verdict", stated.verdict, derived.verdict)
    stated_ids = [a.id for a in stated.assertions]
    derived_ids = [a.id for a in derived.assertions]
    if stated_ids != derived_ids:
        yield Difference("assertion ids", _text(stated_ids), _text(derived_ids))
    by_id = {a.id: a for a in stated.assertions}
    for result in derived.assertions:
        if (claimed := by_id.get(result.id)) is not None:
            yield from _tree_differences(
                f"assertions[{result.id}]",
                claimed.model_dump(mode="json"),
                result.model_dump(mode="json"),
            )
    rest = {"verdict", "assertions"}
    yield from _tree_differences(
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
        *_tree_differences(
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
    return CheckResult(Check.REEVALUATION, summary, _capped(findings)), derived, differences


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
    supplied_key: Ed25519PublicKey | None = None,
    max_bytes: int | None = MAX_REPORT_BYTES,
) -> Verification:
    """Every check on raw, in order; a file that fails structure gets no further."""
    with _collector_paused():
        return _verify(raw, contracts, lab_key, supplied_key, max_bytes)


def _verify(
    raw: bytes,
    contracts: Mapping[str, Contract],
    lab_key: Ed25519PublicKey | None,
    supplied_key: Ed25519PublicKey | None,
    max_bytes: int | None,
) -> Verification:
    parsed = report_parse(raw, max_bytes=max_bytes)
    if not isinstance(parsed, Parsed):
        checks = [CheckResult(Check.STRUCTURE, "not a readable report", tuple(parsed))]
        checks += [
            CheckResult(check, "not run: the structure check failed", ran=False)
            for check in list(Check)[1:]
        ]
        return Verification(checks=tuple(checks))
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
            report, digest, lab_key=lab_key, supplied_key=supplied_key
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

    checks = (
        structure,
        _guarded(Check.CONTRACT, contract),
        _guarded(Check.INTEGRITY, lambda: check_integrity(parsed, digest)),
        _guarded(Check.ORIGIN, origin),
        _guarded(Check.REEVALUATION, reevaluation),
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
    )
