"""Acting on a case: one conditional UPDATE decides which of two operators wins, and every
accepted action is written as a CaseAction (an override also proposes a constraint)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F

from lab.accounts.models import Membership
from lab.accounts.roles import Role, can_act
from lab.operator.live import push_cards
from lab.operator.models import CaseAction, ConstraintCandidate, FlagCase
from lab.operator.states import PAST, Action, CaseState, transition


class CaseNotFound(LookupError):
    """No such case in this tenant (another tenant's case looks the same)."""


class Conflict(Exception):
    """Someone acted on the case after the operator's card was drawn; `case` is as it is now."""

    kind = "conflict"

    def __init__(self, message: str, case: FlagCase) -> None:
        super().__init__(message)
        self.case = case


class BadTarget(ValueError):
    """An escalation to someone who is not a member of the tenant able to act, or no role."""


@dataclass(frozen=True)
class _Assignee:
    user: User | None
    role: str


def act(
    *,
    tenant: str,
    case_id: int,
    actor: User,
    action: Action,
    expected_version: int,
    note: str = "",
    escalate_to: str = "",
) -> CaseAction:
    """Apply one action to a case the actor's card showed at `expected_version`.

    Raises CaseNotFound, InvalidTransition (the state does not allow it), BadTarget, or
    Conflict when another action got there first.
    """
    case = FlagCase.objects.filter(tenant=tenant, pk=case_id).first()
    if case is None:
        raise CaseNotFound(f"there is no case {case_id} in this tenant's queue")
    if case.version != expected_version:
        raise Conflict(_taken(case, actor), case)
    before = CaseState(case.state)
    after = transition(before, action)
    target = _assignee(tenant, escalate_to) if action is Action.ESCALATE else None
    assignee = (
        {"assignee": target.user, "assignee_role": target.role}
        if target
        else {"assignee": case.assignee, "assignee_role": case.assignee_role}
    )
    with transaction.atomic():
        # The first statement writes, so two transactions never both hold a read and wait
        # to write; the one whose UPDATE matches no row lost the race.
        won = FlagCase.objects.filter(
            pk=case.pk, version=expected_version, state=before.value
        ).update(state=after.value, version=F("version") + 1, **assignee)
        if not won:
            now = FlagCase.objects.get(pk=case.pk)
            raise Conflict(_taken(now, actor), now)
        entry = CaseAction.objects.create(
            case=case,
            actor=actor,
            actor_name=actor.get_username(),
            action=action.value,
            from_state=before.value,
            to_state=after.value,
            note=note,
            escalated_to=escalate_to,
        )
        if action is Action.OVERRIDE:
            ConstraintCandidate.objects.create(
                tenant=tenant,
                record_id=case.record_id,
                action=entry,
                claim=case.record.grade.get("claim") or "",
                constraint_list_version=case.record.constraint_list_version,
                note=note,
                proposed_by=actor,
                proposed_by_name=actor.get_username(),
            )
        transaction.on_commit(partial(push_cards, [case.pk], mode="update"), robust=True)
    return entry


def _taken(case: FlagCase, actor: User) -> str:
    """What the operator is told when another action got there first."""
    last = case.actions.order_by("-id").first()
    if last is None:
        return f"This turn changed in the meantime (now {case.state}); look again."
    who = "You" if last.actor_id == actor.pk else "Someone else"
    return (
        f"{who} already {PAST[Action(last.action)]} this turn (now {case.state}): "
        f"{last.actor_name} at {last.at:%H:%M:%S} UTC."
    )


def _assignee(tenant: str, escalate_to: str) -> _Assignee:
    kind, _, name = escalate_to.partition(":")
    if kind == "role":
        if name not in {r.value for r in Role if can_act(r)}:
            raise BadTarget(f"{name!r} is not a role that can act on the queue")
        return _Assignee(user=None, role=name)
    membership = (
        Membership.objects.filter(tenant__slug=tenant, user__username=name)
        .select_related("user")
        .first()
    )
    if membership is None or not can_act(Role(membership.role)):
        raise BadTarget(f"{name!r} is not a member of this tenant who can act on the queue")
    return _Assignee(user=membership.user, role="")
