"""Acting on cases: who may, what each action writes, and two operators at once."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, transaction
from django.db.models import ProtectedError

from lab.accounts.roles import Role
from lab.operator import acting
from lab.operator.acting import BadTarget, Conflict, act
from lab.operator.models import CaseAction, ConstraintCandidate, FlagCase
from lab.operator.states import Action, InvalidTransition

pytestmark = pytest.mark.django_db


def url(case: FlagCase, tenant: str = "demo") -> str:
    return f"/t/{tenant}/queue/cases/{case.id}/act/"


def post(client, case: FlagCase, tenant: str = "demo", *, htmx: bool = True, **body):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(url(case, tenant), {"expected_version": case.version, **body}, **headers)


@pytest.mark.parametrize("role", [Role.OWNER, Role.ADMIN, Role.OPERATOR])
def test_owners_admins_and_operators_acknowledge_and_the_action_is_an_audit_entry(
    client, members, flagged, role
):
    case = flagged[0]
    client.force_login(members[role])
    response = post(client, case, action="acknowledge")
    assert response.status_code == 200
    html = response.content.decode()
    assert f'id="case-{case.id}"' in html and 'data-state="acknowledged"' in html
    assert 'name="action"' not in html  # a final case offers no more actions
    case.refresh_from_db()
    assert (case.state, case.version) == ("acknowledged", 1)
    entry = CaseAction.objects.get(case=case)
    assert (entry.actor, entry.actor_name, entry.action) == (
        members[role],
        members[role].username,
        "acknowledge",
    )
    assert (entry.from_state, entry.to_state) == ("open", "acknowledged")
    assert f"<strong>{members[role].username}</strong> acknowledge: open → acknowledged" in html


def test_a_viewer_may_look_but_not_act(client, members, flagged):
    client.force_login(members[Role.VIEWER])
    response = post(client, flagged[0], action="acknowledge")
    assert response.status_code == 403
    assert "A viewer can look at the queue but not act." in response.content.decode()
    assert not CaseAction.objects.exists()
    assert FlagCase.objects.get(pk=flagged[0].pk).state == "open"


def test_another_tenants_case_is_not_found_through_this_tenants_queue(
    client, members, flagged, outsider
):
    theirs = FlagCase.objects.filter(tenant="acme").first()
    client.force_login(members[Role.OWNER])
    assert post(client, theirs, action="acknowledge").status_code == 404
    assert post(client, theirs, "acme", action="acknowledge").status_code == 404
    client.force_login(outsider)
    assert post(client, flagged[0], action="acknowledge").status_code == 404
    assert post(client, flagged[0], "acme", action="acknowledge").status_code == 404
    big = client.post("/t/acme/queue/cases/99999999999999999999999/act/", {})
    assert big.status_code == 404
    assert not CaseAction.objects.exists()


def test_anonymous_posts_are_sent_to_log_in(client, flagged):
    # Back to the queue after logging in: the action's own URL only takes a POST.
    plain = post(client, flagged[0], htmx=False, action="acknowledge")
    assert plain.status_code == 302
    assert plain["Location"] == "/accounts/login/?next=/t/demo/queue/"
    htmx = post(client, flagged[0], action="acknowledge")
    assert htmx["HX-Redirect"] == "/accounts/login/?next=%2Ft%2Fdemo%2Fqueue%2F"
    assert not CaseAction.objects.exists()


def test_an_override_proposes_its_note_as_a_constraint_candidate(client, members, flagged):
    case = flagged[0]
    client.force_login(members[Role.OPERATOR])
    assert post(client, case, action="override", note="   ").status_code == 400
    response = post(client, case, action="override", note=" We do charge $45 since May. ")
    assert response.status_code == 200
    candidate = ConstraintCandidate.objects.get()
    assert candidate.note == "We do charge $45 since May."
    assert candidate.claim == case.record.grade["claim"] and candidate.claim
    assert (candidate.tenant, candidate.record_id) == ("demo", case.record_id)
    assert candidate.constraint_list_version == "demo_v1"
    assert candidate.proposed_by == members[Role.OPERATOR]
    assert candidate.action.to_state == "overridden"


def test_an_override_without_a_note_is_refused_with_the_reason(client, members, flagged):
    client.force_login(members[Role.ADMIN])
    response = post(client, flagged[0], action="override")
    assert response.status_code == 400
    assert "an override needs a note" in response.content.decode()
    assert not CaseAction.objects.exists()


def test_an_escalation_goes_to_a_member_who_can_act_or_a_role(client, members, flagged):
    client.force_login(members[Role.OPERATOR])
    for target in ["user:viewer1", "user:acme-owner", "user:nobody", "role:viewer", "role:x"]:
        response = post(client, flagged[0], action="escalate", escalate_to=target)
        assert response.status_code == 400, target
        assert "Not escalated" in response.content.decode()
    response = post(client, flagged[0], action="escalate", escalate_to="user:admin1", note="$?")
    assert response.status_code == 200
    case = FlagCase.objects.get(pk=flagged[0].pk)
    assert (case.state, case.assignee, case.assignee_role) == ("escalated", members[Role.ADMIN], "")
    assert "escalated to admin1" in response.content.decode()
    # The admin hands it on to every owner, then an owner closes it.
    client.force_login(members[Role.ADMIN])
    assert post(client, case, action="escalate", escalate_to="role:owner").status_code == 200
    case.refresh_from_db()
    assert (case.state, case.assignee, case.assignee_role) == ("escalated", None, "owner")
    client.force_login(members[Role.OWNER])
    assert post(client, case, action="acknowledge").status_code == 200
    steps = CaseAction.objects.filter(case=case).values_list(
        "from_state", "to_state", "escalated_to"
    )
    assert list(steps) == [
        ("open", "escalated", "user:admin1"),
        ("escalated", "escalated", "role:owner"),
        ("escalated", "acknowledged", ""),
    ]


def test_a_final_case_refuses_any_further_action_by_name(client, members, flagged):
    client.force_login(members[Role.OWNER])
    assert post(client, flagged[0], action="acknowledge").status_code == 200
    case = FlagCase.objects.get(pk=flagged[0].pk)
    response = post(client, case, action="override", note="too late")
    assert response.status_code == 409
    assert "a case that is acknowledged cannot be overridden: it is final" in (
        response.content.decode()
    )
    with pytest.raises(InvalidTransition):
        act(
            tenant="demo",
            case_id=case.id,
            actor=members[Role.OWNER],
            action=Action.ESCALATE,
            expected_version=case.version,
            escalate_to="role:admin",
        )
    assert CaseAction.objects.count() == 1


def test_of_two_operators_acting_on_one_card_one_wins_and_the_other_is_told(
    client, members, flagged
):
    case = flagged[0]
    first, second = members[Role.OPERATOR], members[Role.ADMIN]
    client.force_login(first)
    assert post(client, case, action="acknowledge").status_code == 200
    # The second operator's card still shows version 0.
    client.force_login(second)
    response = post(client, case, action="override", note="it is right")
    assert response.status_code == 409
    html = response.content.decode()
    assert "Someone else already acknowledged this turn (now acknowledged)" in html
    assert "operator1 at" in html
    assert 'data-state="acknowledged"' in html and 'data-version="1"' in html
    assert CaseAction.objects.filter(case=case).count() == 1
    assert not ConstraintCandidate.objects.exists()


def test_the_conditional_update_decides_a_race_both_read_the_same_version(
    members, flagged, monkeypatch
):
    """Both read version 0; the other action lands between this one's read and its UPDATE."""
    case = flagged[0]
    real = acting.transition

    def the_other_operator_gets_there_first(state, action):
        monkeypatch.setattr(acting, "transition", real)
        act(
            tenant="demo",
            case_id=case.id,
            actor=members[Role.ADMIN],
            action=Action.ESCALATE,
            expected_version=0,
            escalate_to="role:owner",
        )
        return real(state, action)

    monkeypatch.setattr(acting, "transition", the_other_operator_gets_there_first)
    with pytest.raises(Conflict) as lost:
        act(
            tenant="demo",
            case_id=case.id,
            actor=members[Role.OPERATOR],
            action=Action.ACKNOWLEDGE,
            expected_version=0,
        )
    assert str(lost.value).startswith("Someone else already escalated this turn (now escalated)")
    assert lost.value.case.version == 1
    case.refresh_from_db()
    assert (case.state, case.version) == ("escalated", 1)
    assert list(CaseAction.objects.values_list("actor_name", flat=True)) == ["admin1"]


def test_the_same_operator_in_two_windows_is_told_it_was_them(members, flagged):
    me = members[Role.OPERATOR]
    kwargs = {"tenant": "demo", "case_id": flagged[0].id, "actor": me, "expected_version": 0}
    act(action=Action.ACKNOWLEDGE, **kwargs)
    with pytest.raises(Conflict, match=r"^You already acknowledged this turn"):
        act(action=Action.ACKNOWLEDGE, **kwargs)


def test_an_escalation_to_someone_outside_is_refused_before_anything_is_written(
    members, flagged, outsider
):
    with pytest.raises(BadTarget, match="not a member of this tenant"):
        act(
            tenant="demo",
            case_id=flagged[0].id,
            actor=members[Role.OWNER],
            action=Action.ESCALATE,
            expected_version=0,
            escalate_to=f"user:{outsider.username}",
        )
    assert FlagCase.objects.get(pk=flagged[0].pk).version == 0


def test_a_form_posted_without_htmx_gets_a_whole_page_with_the_card(client, members, flagged):
    client.force_login(members[Role.OPERATOR])
    response = post(client, flagged[0], htmx=False, action="acknowledge")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.startswith("<!doctype html>") and "Back to the queue" in html
    assert f'id="case-{flagged[0].id}"' in html


def test_owners_and_admins_see_the_proposed_constraints_on_the_queue_page(client, members, flagged):
    client.force_login(members[Role.OPERATOR])
    post(client, flagged[0], action="override", note="Truing is $45 since the May price list.")
    assert 'id="constraint-candidates"' not in client.get("/t/demo/queue/").content.decode()
    for role in (Role.OWNER, Role.ADMIN):
        client.force_login(members[role])
        html = client.get("/t/demo/queue/").content.decode()
        section = html[html.index('id="constraint-candidates"') :]
        assert "<strong>operator1</strong>" in section
        assert "Truing is $45 since the May price list." in section
        assert f"audit_{flagged[0].record_id} (demo_v1)" in section


def test_the_database_refuses_to_change_a_recorded_action(members, flagged):
    entry = act(
        tenant="demo",
        case_id=flagged[0].id,
        actor=members[Role.OWNER],
        action=Action.ACKNOWLEDGE,
        expected_version=0,
    )
    with pytest.raises(DatabaseError, match="written once"), transaction.atomic():
        CaseAction.objects.filter(pk=entry.pk).update(note="it was fine")
    assert CaseAction.objects.get(pk=entry.pk).note == ""


def test_someone_who_acted_is_kept_so_the_entry_keeps_its_actor(members, flagged):
    act(
        tenant="demo",
        case_id=flagged[0].id,
        actor=members[Role.OPERATOR],
        action=Action.ACKNOWLEDGE,
        expected_version=0,
    )
    with pytest.raises(ProtectedError):
        members[Role.OPERATOR].delete()
    members[Role.VIEWER].delete()  # who never acted goes as usual
