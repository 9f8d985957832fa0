"""What each tenant role may do."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.accounts.roles import (
    Role,
    can_act,
    can_manage,
    can_view,
    can_view_rollup,
    role_parse,
)

EXPECTED = {
    #               view  act    rollup manage
    Role.OWNER: (True, True, True, True),
    Role.ADMIN: (True, True, True, True),
    Role.OPERATOR: (True, True, False, False),
    Role.VIEWER: (True, False, False, False),
}


@pytest.mark.parametrize("role", list(Role))
def test_each_role_has_exactly_its_permissions(role):
    granted = (can_view(role), can_act(role), can_view_rollup(role), can_manage(role))
    assert granted == EXPECTED[role]


@given(st.sampled_from(list(Role)))
def test_permissions_are_nested(role):
    # Each step up the ladder only adds: manage implies rollup implies act implies view.
    assert not can_manage(role) or can_view_rollup(role)
    assert not can_view_rollup(role) or can_act(role)
    assert not can_act(role) or can_view(role)


@given(st.sampled_from(list(Role)), st.sampled_from(["", " ", "  "]), st.booleans())
def test_role_parse_reads_any_case_and_padding(role, pad, upper):
    text = role.value.upper() if upper else role.value
    assert role_parse(f"{pad}{text}{pad}") is role


@given(st.text(max_size=20).filter(lambda s: s.strip().lower() not in {r.value for r in Role}))
def test_role_parse_refuses_anything_else_naming_the_valid_roles(raw):
    with pytest.raises(ValueError, match="owner, admin, operator, viewer"):
        role_parse(raw)
