"""The audit trail's own tamper evidence: a hash chain over each tenant's audit rows.

Each row stores its place in the tenant's chain (`chain_seq`, from 1), the hash of the row
before it (`prev_hash`, GENESIS for the first) and its own hash over its canonical content
(RFC 8785 JSON of every stored column but id and its own hash). A changed, removed or inserted
row breaks the links after it; the tenant's head (the last seq and hash) shows a cut-off tail.
Pure: no Django, no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from lab.events.chain import GENESIS_HASH, digest

# The stored columns a row's hash covers, in the names the model gives them.
HASHED = (
    "tenant",
    "chain_seq",
    "prev_hash",
    "agent",
    "call_id",
    "run_id",
    "turn_id",
    "channel",
    "utterance",
    "caller_turn",
    "verdict",
    "category",
    "severity",
    "grounding_verdict",
    "flagged",
    "grader",
    "grader_version",
    "constraint_list_version",
    "constraint_list_digest",
    "knowledge_base_version",
    "retrieval_confidence",
    "grade",
    "grounding",
    "retrieval",
    "grade_latency_ms",
    "turn_latency_ms",
    "spoken_at",
    "graded_at",
    "recorded_at",
    "content_key",
    "corrects_id",
)
__all__ = ["GENESIS_HASH", "HASHED", "ChainBreak", "ChainReport", "row_hash", "verify_chain"]


class Chained(Protocol):
    """What the chain reads of a row (an AuditRecord, or a migration's historical one)."""

    id: int
    chain_seq: int | None
    prev_hash: str
    row_hash: str


def _json(value: Any) -> Any:
    if isinstance(value, datetime):
        moment = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.isoformat(timespec="microseconds")
    if value is None or isinstance(value, bool | int | float | str | list | dict):
        return value
    return str(value)  # a run's UUID


def row_hash(row: Any) -> str:
    """The hash a row must store: over every column HASHED names, as the database gives it."""
    return digest({name: _json(getattr(row, name)) for name in HASHED})


@dataclass(frozen=True)
class ChainBreak:
    """The first place the chain does not hold, in words, and the row it names (if any)."""

    record_id: int | None
    seq: int | None
    reason: str


@dataclass(frozen=True)
class ChainReport:
    tenant: str
    rows: int
    head_hash: str
    broken: ChainBreak | None

    @property
    def intact(self) -> bool:
        return self.broken is None


def verify_chain(tenant: str, rows: Iterable[Chained], head: tuple[int, str] | None) -> ChainReport:
    """Walk the tenant's rows (in chain order, unchained ones last) against the stored head.

    Stops at the first break: a row whose content does not hash to its hash, one that does not
    link to the row before it, a gap in the numbering, a row outside the chain, or a head that
    the last row does not reach.
    """
    expected_seq, previous, count = 1, GENESIS_HASH, 0

    def broken(row: Chained | None, reason: str) -> ChainReport:
        where = None if row is None else row.id
        seq = None if row is None else row.chain_seq
        return ChainReport(tenant, count, previous, ChainBreak(where, seq, reason))

    last: Chained | None = None
    for row in rows:
        ref = f"audit_{row.id}"
        if row.chain_seq is None:
            return broken(row, f"{ref} is not in the chain (no chain_seq)")
        if row.chain_seq != expected_seq:
            after = f"after audit_{last.id} " if last is not None else "at the start "
            missing = row.chain_seq - expected_seq
            reason = (
                f"{missing} row(s) missing {after}(seq {expected_seq}; {ref} has {row.chain_seq})"
                if missing > 0
                else f"{ref} repeats seq {row.chain_seq}"
            )
            return broken(row, reason)
        if row.prev_hash != previous:
            return broken(row, f"{ref} (seq {row.chain_seq}) does not link to the row before it")
        if row_hash(row) != row.row_hash:
            return broken(
                row,
                f"{ref} (seq {row.chain_seq}) was changed: its content does not hash to its hash",
            )
        previous, expected_seq, count, last = row.row_hash, expected_seq + 1, count + 1, row
    if head is None:
        if count:
            return broken(last, "the tenant's chain has rows but no head")
        return ChainReport(tenant, 0, previous, None)
    head_seq, head_hash = head
    if (head_seq, head_hash) != (count, previous):
        at = f"audit_{last.id} (seq {count})" if last is not None else "the start"
        return broken(
            last,
            f"the chain ends at {at} but its head records {head_seq} row(s): "
            "rows at the end are missing or the head was changed",
        )
    return ChainReport(tenant, count, previous, None)
