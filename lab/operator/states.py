"""A flag case's states and the operator actions that move it: one table, one transition.

Pure: no Django, no I/O, no clock. Acknowledged and overridden close a case for good; an
escalated case waits on the person or role it went to, who may close it or hand it on.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# Notes are read by a person beside the turn; a page of text belongs somewhere else.
MAX_NOTE = 2000


class CaseState(StrEnum):
    OPEN = "open"
    ACKNOWLEDGED = "acknowledged"
    OVERRIDDEN = "overridden"
    ESCALATED = "escalated"


class Action(StrEnum):
    ACKNOWLEDGE = "acknowledge"
    OVERRIDE = "override"
    ESCALATE = "escalate"


# How an action reads in "Someone else already acknowledged this turn".
PAST: Final = {
    Action.ACKNOWLEDGE: "acknowledged",
    Action.OVERRIDE: "overrode",
    Action.ESCALATE: "escalated",
}

# How it reads in "it cannot be overridden".
DONE: Final = {
    Action.ACKNOWLEDGE: "acknowledged",
    Action.OVERRIDE: "overridden",
    Action.ESCALATE: "escalated",
}

# Every allowed step. Escalating an escalated case hands it on to someone else.
TRANSITIONS: Final[dict[tuple[CaseState, Action], CaseState]] = {
    (CaseState.OPEN, Action.ACKNOWLEDGE): CaseState.ACKNOWLEDGED,
    (CaseState.OPEN, Action.OVERRIDE): CaseState.OVERRIDDEN,
    (CaseState.OPEN, Action.ESCALATE): CaseState.ESCALATED,
    (CaseState.ESCALATED, Action.ACKNOWLEDGE): CaseState.ACKNOWLEDGED,
    (CaseState.ESCALATED, Action.OVERRIDE): CaseState.OVERRIDDEN,
    (CaseState.ESCALATED, Action.ESCALATE): CaseState.ESCALATED,
}
TERMINAL: Final = frozenset(
    state for state in CaseState if not any(s == state for s, _ in TRANSITIONS)
)


class InvalidTransition(ValueError):
    """An action the case's state does not allow; `kind` is fixed, the message says why."""

    kind = "invalid_transition"

    def __init__(self, state: CaseState, action: Action) -> None:
        final = ": it is final" if state in TERMINAL else ""
        reason = f"a case that is {state.value} cannot be {DONE[action]}{final}"
        super().__init__(reason)
        self.state = state
        self.action = action


def transition(state: CaseState, action: Action) -> CaseState:
    """The state the action moves a case to; InvalidTransition if the table has no such step."""
    target = TRANSITIONS.get((state, action))
    if target is None:
        raise InvalidTransition(state, action)
    return target


def allowed_actions(state: CaseState) -> list[Action]:
    """The actions a case in this state offers, in the order the card shows them."""
    return [action for action in Action if (state, action) in TRANSITIONS]


class ActRequest(BaseModel):
    """One operator action as the card's form sends it, checked before anything is stored."""

    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=True)

    action: Action
    # The version the operator's card showed: a newer one means someone acted in between.
    expected_version: int = Field(ge=0)
    note: str = Field(default="", max_length=MAX_NOTE)
    # "user:<username>" or "role:<role>"; only for escalate.
    escalate_to: str = Field(default="", max_length=200)

    @field_validator("escalate_to")
    @classmethod
    def _target_shape(cls, value: str) -> str:
        if value and not value.startswith(("user:", "role:")):
            raise ValueError("the escalation target must be a tenant member or one of its roles")
        return value

    @model_validator(mode="after")
    def _what_each_action_needs(self) -> ActRequest:
        if self.action is Action.OVERRIDE and not self.note:
            raise ValueError(
                "an override needs a note: why the turn is actually supported (the note is "
                "proposed as an addition to the constraint list)"
            )
        if self.action is Action.ESCALATE and not self.escalate_to:
            raise ValueError("an escalation needs someone to go to: a member or a role")
        if self.action is not Action.ESCALATE and self.escalate_to:
            raise ValueError(f"only an escalation names a target, not {self.action.value}")
        return self
