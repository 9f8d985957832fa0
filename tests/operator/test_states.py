"""The case state machine: every step in the table, nothing else, no way out of a final state."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from lab.operator.states import (
    TERMINAL,
    TRANSITIONS,
    Action,
    ActRequest,
    CaseState,
    InvalidTransition,
    allowed_actions,
    transition,
)


def test_the_table_is_exactly_the_steps_the_queue_allows():
    assert TRANSITIONS == {
        (CaseState.OPEN, Action.ACKNOWLEDGE): CaseState.ACKNOWLEDGED,
        (CaseState.OPEN, Action.OVERRIDE): CaseState.OVERRIDDEN,
        (CaseState.OPEN, Action.ESCALATE): CaseState.ESCALATED,
        (CaseState.ESCALATED, Action.ACKNOWLEDGE): CaseState.ACKNOWLEDGED,
        (CaseState.ESCALATED, Action.OVERRIDE): CaseState.OVERRIDDEN,
        (CaseState.ESCALATED, Action.ESCALATE): CaseState.ESCALATED,
    }
    assert {CaseState.ACKNOWLEDGED, CaseState.OVERRIDDEN} == TERMINAL


@pytest.mark.parametrize("state", sorted(CaseState))
@pytest.mark.parametrize("action", sorted(Action))
def test_every_pair_is_either_a_step_of_the_table_or_refused_by_name(state, action):
    if (state, action) in TRANSITIONS:
        assert transition(state, action) is TRANSITIONS[state, action]
        assert action in allowed_actions(state)
    else:
        with pytest.raises(InvalidTransition) as refused:
            transition(state, action)
        assert str(refused.value).startswith(f"a case that is {state.value} cannot be")
        assert "final" in str(refused.value)
        assert (refused.value.state, refused.value.action) == (state, action)
        assert action not in allowed_actions(state)


@given(st.lists(st.sampled_from(list(Action)), max_size=12))
def test_a_case_never_leaves_a_final_state_and_every_accepted_step_is_in_the_table(actions):
    state = CaseState.OPEN
    for action in actions:
        try:
            after = transition(state, action)
        except InvalidTransition:
            assert (state, action) not in TRANSITIONS
            continue
        assert TRANSITIONS[state, action] is after
        assert state not in TERMINAL
        state = after
    if any(a in (Action.ACKNOWLEDGE, Action.OVERRIDE) for a in actions):
        assert state in TERMINAL


def test_an_override_needs_a_note_that_is_not_just_spaces():
    with pytest.raises(ValidationError, match="an override needs a note"):
        ActRequest(action=Action.OVERRIDE, expected_version=0, note="   \n ")
    asked = ActRequest(action=Action.OVERRIDE, expected_version=0, note="  $149 is right  ")
    assert asked.note == "$149 is right"


def test_an_escalation_names_a_member_or_a_role_and_nothing_else_names_one():
    with pytest.raises(ValidationError, match="needs someone to go to"):
        ActRequest(action=Action.ESCALATE, expected_version=0)
    with pytest.raises(ValidationError, match="a tenant member or one of its roles"):
        ActRequest(action=Action.ESCALATE, expected_version=0, escalate_to="alice")
    with pytest.raises(ValidationError, match="only an escalation names a target"):
        ActRequest(action=Action.ACKNOWLEDGE, expected_version=0, escalate_to="role:admin")
    assert ActRequest(action="escalate", expected_version="3", escalate_to="role:admin")


@pytest.mark.parametrize(
    "body",
    [
        {"action": "delete", "expected_version": "0"},
        {"action": "acknowledge", "expected_version": "-1"},
        {"action": "acknowledge", "expected_version": "soon"},
        {"action": "acknowledge"},
        {"action": "override", "expected_version": "0", "note": "x" * 2001},
    ],
)
def test_malformed_requests_are_refused_before_anything_happens(body):
    with pytest.raises(ValidationError):
        ActRequest.model_validate(body)
