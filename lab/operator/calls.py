"""A call as its audit rows tell it: each agent turn in turn order, its grade and grounding,
the caller line before it shown once however many agent turns follow it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from django.urls import reverse

from lab.audit.models import AuditRecord
from lab.audit.selectors import audit_entry, audit_records_for_call
from lab.audit.turn_view import TurnView, turn_view


@dataclass(frozen=True)
class CallTurn:
    """One agent turn of the call, after the caller line it answers when that line is new."""

    caller: str | None
    record: AuditRecord
    turn: TurnView
    # The flag's card in the queue, for a flagged turn.
    case_url: str | None


def with_new_callers(rows: Sequence[AuditRecord]) -> Iterator[tuple[str | None, AuditRecord]]:
    """Each row with its caller turn, or None where the previous row already showed it."""
    last: str | None = None
    for row in rows:
        yield (row.caller_turn if row.caller_turn and row.caller_turn != last else None), row
        last = row.caller_turn or last


def latest_per_turn(rows: Sequence[AuditRecord]) -> list[AuditRecord]:
    """A regraded turn once, at its first place, as its newest row says (rows in id order)."""
    newest: dict[str, AuditRecord] = {}
    for row in rows:
        newest[row.turn_id] = row
    return list(newest.values())


def call_turns(tenant: str, call_id: str) -> list[CallTurn]:
    """The call's agent turns, oldest first; empty when the tenant has no such call."""
    found = audit_records_for_call(tenant=tenant, call_id=call_id).select_related("case")
    return [
        CallTurn(caller, row, turn_view(audit_entry(row), row), _case_url(row))
        for caller, row in with_new_callers(latest_per_turn(list(found)))
    ]


def _case_url(row: AuditRecord) -> str | None:
    case = getattr(row, "case", None)  # a turn that was never flagged has none
    return reverse("operator_case", args=[row.tenant, case.id]) if case is not None else None
