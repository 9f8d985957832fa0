"""What a scripted caller line means, written in the contract beside its words.

The lab knows what its own caller means; an outside agent is judged on that, not on how the
lab's understanding happens to read the words. Pure: no Django, no I/O.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lab.events.actions import shape_for
from lab.events.vocabulary import Action, Args

MeaningKind = Literal[
    "request",
    "correction",
    "confirmation",
    "non_confirmation",
    "interruption",
    "question",
    "other",
]
_INT_KEYS = frozenset({"amount_cents"})


class CallerMeaning(BaseModel):
    """One line's meaning: its kind and, for a request or a correction, the action and values.

    args: the values a request names. changes: the values a correction (or an interruption that
    corrects) replaces; the rest of the request stands. A non-confirmation sounds agreeable but
    confirms nothing; a question asks the business something; other moves nothing.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: MeaningKind
    action: Action | None = None
    args: Args = Field(default_factory=dict)
    changes: Args = Field(default_factory=dict)

    @model_validator(mode="after")
    def _fits_its_kind(self) -> Self:
        if self.kind != "request" and self.args:
            raise ValueError(f"a {self.kind} names no args; a correction names its changes")
        if self.kind not in ("correction", "interruption") and self.changes:
            raise ValueError(f"a {self.kind} changes nothing; only a correction does")
        if self.kind == "correction" and not self.changes:
            raise ValueError("a correction must say what it changes")
        moves = self.kind in ("request", "correction") or bool(self.changes)
        if moves and self.action is None:
            raise ValueError(f"a {self.kind} that asks for something must name its action")
        if not moves and self.action is not None:
            raise ValueError(f"a {self.kind} is about no action")
        if self.action is not None:
            _check_values(self.action, self.args | self.changes)
        return self

    @property
    def values(self) -> Args:
        """The values the line names: a request's args or a correction's changes."""
        return dict(self.args or self.changes)


def _check_values(action: Action, values: Args) -> None:
    """The values a request may name are its action's shape's (the keys the events' Args carry);
    an action a tools file declares takes those of the shape its values use."""
    keys = shape_for(action, values).request_keys
    unknown = set(values) - keys
    if unknown:
        known = ", ".join(sorted(keys))
        raise ValueError(f"{action} takes no {', '.join(sorted(unknown))}; it takes {known}")
    for key, value in values.items():
        if isinstance(value, int) is not (key in _INT_KEYS):
            raise ValueError(f"{key} must be {'an integer' if key in _INT_KEYS else 'a string'}")
