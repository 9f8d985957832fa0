"""What a material action is made of, as data: the lab's book and refund, and any other action a
tools file declares (`cancel`, `reschedule`, `pay`) in one of the same two shapes. Pure.

A slot-shaped action takes an option a lookup listed by its id and is read back by its day and
time; an amount-shaped one is asked for by a number the caller gives (an order) and read back by
an amount the listed option caps. The referee, the tools-file readers and the scenario meanings
read these fields instead of asking which action it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from lab.events.vocabulary import Action, Args

ShapeName = Literal["slot", "amount"]


@dataclass(frozen=True)
class Shape:
    """The keys an action's requests, options and readbacks carry."""

    name: ShapeName
    key: str  # the option args key that names an option
    listed_by_id: bool  # a commit names a listed option by its id (else the caller's own key)
    required: tuple[str, ...]  # what a request must name before the agent can look it up
    needed: tuple[str, ...]  # what a listed option must carry to be matched to a readback
    matched: tuple[str, ...]  # what a readback names itself, equal to the option's
    implied: tuple[str, ...]  # what a readback may leave to the option (the order it is about)
    capped: str | None  # a value the option caps (max_<capped>), said in the readback
    windowed: bool  # a request may narrow the time (part of day, after, before)
    request_keys: frozenset[str]  # what a scenario's request for it may name


SLOT = Shape(
    name="slot",
    key="slot_id",
    listed_by_id=True,
    required=("day",),
    needed=("slot_id", "day", "time"),
    matched=("day", "time"),
    implied=(),
    capped=None,
    windowed=True,
    request_keys=frozenset({"day", "part_of_day", "time", "around", "after", "before", "prefer"}),
)
AMOUNT = Shape(
    name="amount",
    key="order_number",
    listed_by_id=False,
    required=("order_number", "amount_cents"),
    needed=("order_number",),
    matched=(),
    implied=("order_number",),
    capped="amount_cents",
    windowed=False,
    request_keys=frozenset({"order_number", "amount_cents"}),
)
SHAPES: dict[ShapeName, Shape] = {"slot": SLOT, "amount": AMOUNT}
LAB_ACTIONS: dict[Action, Shape] = {Action.BOOK: SLOT, Action.REFUND: AMOUNT}


def shape_of(action: Action, declared: Mapping[Action, Shape] | None = None) -> Shape:
    """The action's shape: the lab's own, else as declared, else a slot's."""
    return LAB_ACTIONS.get(action) or (declared or {}).get(action) or SLOT


def shape_for(action: Action, values: Args) -> Shape:
    """The shape a scenario's request names: the lab's own for its actions; for another, the
    one whose keys the values use (an action a tools file declares)."""
    if action in LAB_ACTIONS:
        return LAB_ACTIONS[action]
    return next((s for s in SHAPES.values() if set(values) <= s.request_keys), SLOT)
