"""The integrity check: every event's hash, the chain from the genesis hash, the body digest.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from lab.events.chain import GENESIS_HASH, digest, event_body
from lab.events.types import event_id_for
from lab.reports.findings import Finding
from lab.reports.results import Check, CheckResult, capped, short
from lab.reports.schema import Report
from lab.reports.structure import Parsed


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
                    f"{short(recomputed)}, it states {short(event.hash)})",
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
                f"body digest mismatch (the body hashes to {short(recomputed_digest)}, the file "
                f"states {short(stated)}): something was changed after the digest was taken",
            )
        )
    count = len(report.events)
    summary = (
        f"{count} events chained from the genesis hash, seq 1 to {count} without gaps; "
        f"body digest {short(stated)} matches"
        if not findings
        else f"{len(findings)} problem(s) in the hash chain or body digest"
    )
    return CheckResult(Check.INTEGRITY, summary, capped(findings))
