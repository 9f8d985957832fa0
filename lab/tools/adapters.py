"""The sandboxed tool adapters: reads need nothing, writes need an Authorization.

Synchronous ORM code; async callers wrap it with database_sync_to_async.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from django.conf import settings
from django.db import IntegrityError, transaction

from lab.events.chain import digest
from lab.events.models import Run, StoredEvent
from lab.events.types import (
    PARTS_OF_DAY,
    PAYLOAD,
    Action,
    Args,
    CommitFailureKind,
    GateDecision,
    Mode,
    Operation,
    Outcome,
    Receipt,
)
from lab.tools.authorization import Authorization, CommitRequest, Grant
from lab.tools.models import Appointment, CalendarSlot, LedgerOrder, ToolExecution

FIXTURE_DIR = Path(settings.BASE_DIR) / "fixtures"


class CommitRejected(Exception):
    """A write the adapter refused; kind is one of CommitFailed.failure_kind."""

    def __init__(self, kind: CommitFailureKind, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


@dataclass(frozen=True)
class CommitResult:
    receipt: Receipt
    replayed: bool


class ToolAdapter(Protocol):
    name: str
    action: Action

    def load(self, run: Run) -> None: ...
    def lookup(self, run: Run, query: Args) -> list[Args]: ...
    def commit(
        self, run: Run, authorization: Authorization, request: CommitRequest
    ) -> CommitResult: ...


def _fixture(name: str) -> dict:
    return json.loads((FIXTURE_DIR / f"{name}.json").read_text())


def _recorded_grant(run: Run, decision_event_id: str) -> Grant | None:
    """What the run's stored gate decision allowed, or None if it allowed no commit."""
    row = StoredEvent.objects.filter(run=run, event_id=decision_event_id).first()
    if row is None or row.type != "gate.decision":
        return None
    decision = PAYLOAD.validate_python(row.payload)
    if (
        not isinstance(decision, GateDecision)
        or decision.outcome is Outcome.BLOCK
        or decision.request.operation is not Operation.COMMIT
        or not decision.idempotency_key
    ):
        return None
    return Grant.of(decision)


def authorize(
    run: Run, authorization: Authorization, request: CommitRequest, *, action: Action
) -> None:
    """Refuse a write its authorization does not cover, before anything executes."""
    if request.action is not action:
        raise CommitRejected("error", f"this adapter does not {request.action}")
    if authorization.decision_event_id is None:
        # The unguarded label is the deliberately unsafe mode, and only that mode's.
        if run.mode != Mode.UNGUARDED:
            raise CommitRejected("unauthorized", "a guarded run's writes need a gate decision")
        if authorization.idempotency_key != request.idempotency_key:
            raise CommitRejected("unauthorized", "the label names another idempotency key")
        return
    decision_id = authorization.decision_event_id
    grant = authorization.grant
    if grant is None or _recorded_grant(run, decision_id) != grant:
        raise CommitRejected(
            "unauthorized", f"{decision_id} is not a recorded gate decision allowing this commit"
        )
    differences = grant.differences(request)
    if differences:
        raise CommitRejected(
            "unauthorized",
            f"gate decision {decision_id} authorized another {', '.join(differences)}",
        )


def _execute_once(
    *, run: Run, adapter: str, action: Action, authorization: Authorization, args: Args, apply
) -> CommitResult:
    """Run apply() at most once per idempotency key; a known key returns its original receipt."""
    args_hash = digest(args)
    existing = ToolExecution.objects.filter(idempotency_key=authorization.idempotency_key).first()
    if existing is None:
        execution_id = str(uuid.uuid4())
        try:
            with transaction.atomic():
                row = ToolExecution.objects.create(
                    run=run,
                    idempotency_key=authorization.idempotency_key,
                    adapter=adapter,
                    action=action.value,
                    args=args,
                    args_hash=args_hash,
                    execution_id=execution_id,
                    receipt_id=f"R-{execution_id[:8].upper()}",
                    authorized_by=authorization.decision_event_id or "",
                )
                apply(execution_id)
            return CommitResult(receipt=_receipt(row), replayed=False)
        except IntegrityError:
            # A concurrent request with the same key won the insert: fall through to replay.
            existing = ToolExecution.objects.get(idempotency_key=authorization.idempotency_key)
    if existing.voided:
        raise CommitRejected(
            "error",
            f"reconciliation recorded idempotency key {authorization.idempotency_key[:12]}… as "
            "not executed; it never runs now",
        )
    if existing.args_hash != args_hash:
        raise CommitRejected(
            "conflict",
            f"idempotency key {authorization.idempotency_key[:12]}… was first used with other "
            "arguments; refusing to replay it for these",
        )
    return CommitResult(receipt=_receipt(existing), replayed=True)


def execution_settle(*, run: Run, idempotency_key: str, args_hash: str) -> Receipt | None:
    """The receipt the sandbox holds for this key and these arguments, or None.

    With no execution for the key, the key is voided in the same step, so that a write still
    in flight cannot execute after the log has said it did not.
    """
    row = ToolExecution.objects.filter(idempotency_key=idempotency_key).first()
    if row is None:
        void_id = str(uuid.uuid4())
        try:
            with transaction.atomic():
                row = ToolExecution.objects.create(
                    run=run,
                    idempotency_key=idempotency_key,
                    adapter="",
                    action="",
                    args={},
                    args_hash="",
                    execution_id=void_id,
                    receipt_id=f"V-{void_id[:8].upper()}",
                    voided=True,
                )
        except IntegrityError:
            # The write in flight committed first: what it executed is the answer.
            row = ToolExecution.objects.get(idempotency_key=idempotency_key)
    if row.voided or row.run_id != run.pk or row.args_hash != args_hash:
        return None
    return _receipt(row)


def _receipt(row: ToolExecution) -> Receipt:
    return Receipt(
        receipt_id=row.receipt_id,
        execution_id=row.execution_id,
        idempotency_key=row.idempotency_key,
        adapter=row.adapter,
        action=Action(row.action),
        args=row.args,
    )


class CalendarAdapter:
    name = "calendar-sandbox-1"
    action = Action.BOOK

    def load(self, run: Run) -> None:
        CalendarSlot.objects.bulk_create(
            CalendarSlot(run=run, **slot) for slot in _fixture("calendar")["slots"]
        )

    def lookup(self, run: Run, query: Args) -> list[Args]:
        slots = CalendarSlot.objects.filter(run=run).order_by("slot_id")
        if "day" in query:
            slots = slots.filter(day=query["day"])
        options: list[Args] = []
        for slot in slots:
            hour = int(slot.time[:2])
            part = query.get("part_of_day")
            if part and not PARTS_OF_DAY[str(part)][0] <= hour < PARTS_OF_DAY[str(part)][1]:
                continue
            if "time" in query and slot.time != query["time"]:
                continue
            options.append({"slot_id": slot.slot_id, "day": slot.day, "time": slot.time})
        return options

    def commit(
        self, run: Run, authorization: Authorization, request: CommitRequest
    ) -> CommitResult:
        authorize(run, authorization, request, action=self.action)
        args = request.args
        slot = CalendarSlot.objects.filter(run=run, slot_id=args.get("slot_id")).first()
        if slot is None or slot.day != args.get("day") or slot.time != args.get("time"):
            raise CommitRejected("not_found", f"the calendar has no slot {args}")

        def book(execution_id: str) -> None:
            Appointment.objects.create(run=run, slot=slot, execution_id=execution_id)

        return _execute_once(
            run=run,
            adapter=self.name,
            action=self.action,
            authorization=authorization,
            args=args,
            apply=book,
        )


class LedgerAdapter:
    name = "ledger-sandbox-1"
    action = Action.REFUND

    def load(self, run: Run) -> None:
        LedgerOrder.objects.bulk_create(
            LedgerOrder(run=run, **order) for order in _fixture("ledger")["orders"]
        )

    def lookup(self, run: Run, query: Args) -> list[Args]:
        order = LedgerOrder.objects.filter(run=run, order_number=query.get("order_number")).first()
        if order is None:
            return []
        return [
            {
                "order_number": order.order_number,
                "max_amount_cents": order.paid_cents - order.refunded_cents,
            }
        ]

    def commit(
        self, run: Run, authorization: Authorization, request: CommitRequest
    ) -> CommitResult:
        authorize(run, authorization, request, action=self.action)
        args = request.args
        order = LedgerOrder.objects.filter(run=run, order_number=args.get("order_number")).first()
        if order is None:
            raise CommitRejected("not_found", f"the ledger has no order {args.get('order_number')}")
        amount = int(args.get("amount_cents", 0))

        def refund(execution_id: str) -> None:
            locked = LedgerOrder.objects.select_for_update().get(pk=order.pk)
            if amount <= 0 or locked.refunded_cents + amount > locked.paid_cents:
                raise CommitRejected(
                    "error",
                    f"order {locked.order_number} cannot take a refund of {amount} cents",
                )
            locked.refunded_cents += amount
            locked.save(update_fields=["refunded_cents"])

        return _execute_once(
            run=run,
            adapter=self.name,
            action=self.action,
            authorization=authorization,
            args=args,
            apply=refund,
        )


ADAPTERS: dict[str, ToolAdapter] = {"calendar": CalendarAdapter(), "ledger": LedgerAdapter()}
