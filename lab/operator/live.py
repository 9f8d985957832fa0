"""The queue's live side: every page of a tenant's queue, on any process, follows one
channel-layer group; a new or changed card is rendered once and sent to it after commit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from pydantic import BaseModel, ConfigDict

from lab.operator.cards import Card, Target, cards_for, escalation_targets, render_card
from lab.operator.filters import QueueFilter
from lab.operator.models import FlagCase
from lab.operator.queue import queue_page_cases

# "new" goes on top of the list, "update" replaces the card where a page shows it.
Mode = Literal["new", "update"]


def queue_group(tenant: str) -> str:
    """The group of every socket showing the tenant's queue."""
    return f"queue.{tenant}"


class CardMessage(BaseModel):
    """A card as the group carries it: drawn for those who may act and for those who may not."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["queue.card"] = "queue.card"
    mode: Mode
    case: int
    record: int
    severity: str
    category: str
    agent: str
    state: str
    html_act: str
    html_view: str


def card_message(card: Card, *, mode: Mode, targets: list[Target]) -> CardMessage:
    record = card.record

    def drawn(may_act: bool) -> str:
        return render_card(
            card, tenant=card.case.tenant, may_act=may_act, targets=targets, oob=mode
        )

    return CardMessage(
        mode=mode,
        case=card.case.id,
        record=card.record.id,
        severity=record.severity,
        category=record.category,
        agent=card.case.agent,
        state=card.case.state,
        html_act=drawn(True),
        html_view=drawn(False),
    )


def push_cards(case_ids: Sequence[int], *, mode: Mode) -> None:
    """Send the cases' cards to their tenants' queue pages (call it once the rows committed)."""
    layer = get_channel_layer()
    if layer is None or not case_ids:
        return
    cases = list(FlagCase.objects.filter(pk__in=case_ids).select_related("record", "assignee"))
    by_tenant: dict[str, list[FlagCase]] = {}
    for case in sorted(cases, key=lambda c: c.record_id):
        by_tenant.setdefault(case.tenant, []).append(case)
    for tenant, group in by_tenant.items():
        targets = escalation_targets(tenant)
        for card in cards_for(group):
            message = card_message(card, mode=mode, targets=targets)
            async_to_sync(layer.group_send)(queue_group(tenant), message.model_dump())


def cards_since(tenant: str, wanted: QueueFilter, *, after: int, may_act: bool) -> list[str]:
    """The new-card messages a (re)connecting page lacks: its filter's cases whose record is
    newer than the newest it showed, oldest first so the newest ends on top."""
    cases = queue_page_cases(tenant, wanted, after=after).cases
    targets = escalation_targets(tenant) if may_act else []
    return [
        render_card(card, tenant=tenant, may_act=may_act, targets=targets, oob="new")
        for card in reversed(cards_for(cases))
    ]
