"""A queue card as the page draws it: the flagged turn inside its call, the grade, the cited
chunks, the violated constraints, the case's history and what the viewer may do next.

The page, the action responses and the live push all render cards through `cards_for`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import prefetch_related_objects
from django.template.loader import render_to_string
from django.urls import reverse

from lab.accounts.models import Membership
from lab.accounts.roles import Role, can_act
from lab.audit.models import AuditRecord
from lab.audit.selectors import audit_entry
from lab.audit.turn_view import TurnView, turn_view
from lab.operator.calls import with_new_callers
from lab.operator.constraints import ConstraintView, constraint_views
from lab.operator.models import CaseAction, FlagCase
from lab.operator.states import Action, CaseState, allowed_actions

TEMPLATE = "operator/queue.html"
# The card alone (an action's answer), on top of the list, or in place of the one shown.
PARTIALS = {"": "card", "new": "card_new", "update": "card_update"}
# How much of a long call a card shows around the flagged turn (agent turns).
TURNS_BEFORE = 6
TURNS_AFTER = 3


@dataclass(frozen=True)
class Line:
    """One line of the call's transcript; the flagged turn is highlighted."""

    speaker: str
    text: str
    record_id: int | None = None
    highlighted: bool = False


@dataclass(frozen=True)
class Target:
    """Someone an escalation can go to: "user:<username>" or "role:<role>"."""

    value: str
    label: str


@dataclass(frozen=True)
class Card:
    case: FlagCase
    record: AuditRecord
    turn: TurnView
    transcript: list[Line]
    constraints: list[ConstraintView]
    history: list[CaseAction]
    actions: list[Action]
    # The tenant's pages about the turn (a run's only where the call was a lab run).
    case_url: str
    call_url: str
    run_url: str | None
    report_url: str | None

    @property
    def dom_id(self) -> str:
        return f"case-{self.case.id}"


def escalation_targets(tenant: str) -> list[Target]:
    """The tenant's members who can act, then the roles that can, for the escalate select."""
    members = (
        Membership.objects.filter(tenant__slug=tenant)
        .select_related("user")
        .order_by("user__username")
    )
    people = [
        Target(f"user:{m.user.username}", f"{m.user.username} ({m.role})")
        for m in members
        if can_act(Role(m.role))
    ]
    roles = [Target(f"role:{r.value}", f"every {r.value}") for r in Role if can_act(r)]
    return people + roles


def cards_for(cases: Sequence[FlagCase]) -> list[Card]:
    """Cards for cases of one tenant, with their calls' transcripts read in one query."""
    if not cases:
        return []
    tenant = cases[0].tenant
    records = {c.record_id: c.record for c in cases}
    calls = {r.call_id for r in records.values()}
    rows: dict[str, list[AuditRecord]] = defaultdict(list)
    for row in (
        AuditRecord.objects.filter(tenant=tenant, call_id__in=calls)
        .only("id", "call_id", "utterance", "caller_turn")
        .order_by("id")
    ):
        rows[row.call_id].append(row)
    # Each card shows its flag's webhook deliveries (templates/alerts/_card.html): one read for
    # the page instead of one per card.
    prefetch_related_objects(list(records.values()), "alerts__endpoint", "alerts__tries")
    history: dict[int, list[CaseAction]] = defaultdict(list)
    for action in CaseAction.objects.filter(case__in=[c.id for c in cases]).order_by("id"):
        history[action.case_id].append(action)
    return [_card(case, rows[case.record.call_id], history[case.id]) for case in cases]


def _card(case: FlagCase, call: list[AuditRecord], history: list[CaseAction]) -> Card:
    record = case.record
    grade = record.grade
    return Card(
        case=case,
        record=record,
        turn=turn_view(audit_entry(record), record),
        transcript=transcript_lines(call, record.id),
        constraints=constraint_views(
            tenant=record.tenant,
            version=record.constraint_list_version,
            digest=record.constraint_list_digest,
            refs=list(grade.get("constraint_ref") or ()),
        ),
        history=history,
        actions=allowed_actions(CaseState(case.state)),
        case_url=reverse("operator_case", args=[record.tenant, case.id]),
        call_url=reverse("operator_call", args=[record.tenant, record.call_id]),
        run_url=_run_link("operator_run", record),
        report_url=_run_link("operator_run_report", record),
    )


def _run_link(name: str, record: AuditRecord) -> str | None:
    return reverse(name, args=[record.tenant, record.run_id]) if record.run_id else None


def transcript_lines(call: list[AuditRecord], flagged: int) -> list[Line]:
    """The call's turns around the flagged one, in order; a caller line is shown once however
    many agent turns follow it."""
    at = next(i for i, row in enumerate(call) if row.id == flagged)
    shown = call[max(0, at - TURNS_BEFORE) : at + TURNS_AFTER + 1]
    lines: list[Line] = []
    if (earlier := at - TURNS_BEFORE) > 0:
        lines.append(Line("note", f"{earlier} earlier agent turn{'s' if earlier > 1 else ''}"))
    for caller, row in with_new_callers(shown):
        if caller is not None:
            lines.append(Line("caller", caller))
        lines.append(Line("agent", row.utterance, row.id, row.id == flagged))
    if (later := len(call) - at - TURNS_AFTER - 1) > 0:
        lines.append(Line("note", f"{later} later agent turn{'s' if later > 1 else ''}"))
    return lines


def render_card(
    card: Card,
    *,
    tenant: str,
    may_act: bool,
    targets: list[Target],
    message: str = "",
    oob: str = "",
) -> str:
    """The card's HTML; `oob` "new" or "update" wraps it for an out-of-band swap over the socket."""
    context = {
        "card": card,
        "tenant": tenant,
        "may_act": may_act,
        "targets": targets,
        "message": message,
    }
    return render_to_string(f"{TEMPLATE}#{PARTIALS[oob]}", context)


def card_of(case_id: int) -> Card:
    """One case's card read fresh, as an action leaves it."""
    return cards_for([FlagCase.objects.select_related("record", "assignee").get(pk=case_id)])[0]
