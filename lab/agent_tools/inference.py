"""What a tools file leaves out, inferred from tool and argument names, and said aloud. Pure.

A tool named `book_*`, `reserve_*`, `create_*`, `cancel_*`, `refund_*`, `pay_*` writes; one named
`find_*`, `search_*`, `check_*`, `get_*`, `list_*`, `look_up_*` reads. An argument's role comes
from its name or its JSON Schema format; on a write, an id argument (`id`, `*_id`, `*_ref`,
`ref`, `code`) names an option a lookup listed. The file overrides every guess, and every guess
is listed so a team can check it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lab.agent_tools.schema import Function, Kind, Meaning, Results, Role, ToolsFile
from lab.events.actions import SHAPES, Shape, ShapeName, shape_of
from lab.events.types import Action

_WRITES = re.compile(
    r"^(?:book|reserve|create|cancel|refund|pay|schedule|place|issue|make|submit|charge|"
    r"confirm|add|update|modify|reschedule|order)(?:_|$)"
)
_READS = re.compile(
    r"^(?:find|search|check|get|list|look_?up|lookup|query|fetch|show|available|availability|"
    r"view|browse)(?:_|$)"
)
_MONEY = re.compile(r"refund|amount|money|order|payment|charge")
_ROLES: tuple[tuple[re.Pattern[str], Role], ...] = (
    (re.compile(r"^(?:order|order_?(?:number|no|num|id))$"), Role.ORDER),
    (re.compile(r"(?:^|_)cents$"), Role.AMOUNT_CENTS),
    (re.compile(r"^(?:amount|refund_amount|value|sum)$"), Role.AMOUNT),
    (re.compile(r"^(?:part|part_of_day|period|daypart|time_of_day|session)$"), Role.PART_OF_DAY),
    (re.compile(r"^(?:datetime|date_?time|start_?datetime|when|starts?_at)$"), Role.DATETIME),
    (re.compile(r"^(?:day|date|weekday|on|on_date|\w+_date|\w+_day)$"), Role.DAY),
    (re.compile(r"^(?:time|at|hour|start|start_?time|\w+_time)$"), Role.TIME),
)
# What a listed option shows whatever the arguments say (what a readback names): any of these
# roles, else a field of this name and role.
_SHOWN: dict[ShapeName, tuple[tuple[frozenset[Role], tuple[str, Role]], ...]] = {
    "slot": (
        (frozenset({Role.DAY, Role.DATETIME}), ("day", Role.DAY)),
        (frozenset({Role.TIME, Role.DATETIME}), ("time", Role.TIME)),
    ),
    "amount": (
        (frozenset({Role.ORDER}), ("order_number", Role.ORDER)),
        (frozenset({Role.AMOUNT_CENTS, Role.AMOUNT}), ("refundable_cents", Role.AMOUNT_CENTS)),
    ),
}
# An id by its name: on a write it names a listed option; in a result it identifies one.
ID_NAME = re.compile(r"^(?:id|ref|code)$|_(?:id|ref)$")
_FORMATS = {"date": Role.DAY, "date-time": Role.DATETIME, "time": Role.TIME}


@dataclass(frozen=True)
class ToolMeaning:
    """One tool's meaning with nothing left out; `inferred` says which parts were guessed."""

    name: str
    kind: Kind
    action: Action
    args: dict[str, Role]
    results: Results | None
    results_given: bool  # False: served under `options`, read from its own results by value
    day_format: str
    time_format: str
    inferred: tuple[str, ...]


def resolve(file: ToolsFile) -> dict[str, ToolMeaning]:
    """Every tool's meaning: the file's where it says, inferred where it does not."""
    meanings = {
        tool.name: _resolve(tool, file.meanings.get(tool.name, Meaning())) for tool in file.tools
    }
    shapes = {Action(name): SHAPES[shape] for name, shape in file.actions.items()}
    return {
        name: _with_results(meaning, meanings, shape_of(meaning.action, shapes))
        for name, meaning in meanings.items()
    }


def _resolve(tool: Function, given: Meaning) -> ToolMeaning:
    inferred: list[str] = []
    kind = given.kind
    if kind is None:
        kind = _kind(tool.name)
        inferred.append(f"kind {kind}")
    action = given.action
    if action is None:
        action = _action(tool)
        inferred.append(f"action {action}")
    args = dict(given.args or {})
    for argument, schema in tool.properties().items():
        if argument in args:
            continue
        args[argument] = role_of(argument, schema, kind)
        inferred.append(f"{argument} as {args[argument]}")
    return ToolMeaning(
        name=tool.name,
        kind=kind,
        action=action,
        args=args,
        results=given.results,
        results_given=given.results is not None,
        day_format=given.day_format,
        time_format=given.time_format,
        inferred=tuple(inferred),
    )


def _with_results(
    meaning: ToolMeaning, meanings: dict[str, ToolMeaning], shape: Shape
) -> ToolMeaning:
    """A lookup with no `results` lists its options under `options`, each named as the action's
    write names them (its id argument, its day and time arguments)."""
    if meaning.kind is not Kind.LOOKUP or meaning.results is not None:
        return meaning
    fields: dict[str, Role] = {}
    for other in meanings.values():
        if other.kind is Kind.COMMIT and other.action is meaning.action:
            for argument, role in other.args.items():
                if role is not Role.CONTEXT:
                    fields.setdefault(argument, role)
    for argument, role in meaning.args.items():
        if role in (Role.DAY, Role.TIME, Role.ORDER):
            fields.setdefault(argument, role)
    for shown, (default, role) in _SHOWN[shape.name]:
        if not shown.intersection(fields.values()):
            fields[default] = role
    # An order is its own id; a slot or a table has one of its own.
    ids = (Role.OPTION_ID,) if shape.listed_by_id else (Role.OPTION_ID, Role.ORDER)
    identifier = next((name for name, role in fields.items() if role in ids), None)
    if identifier is None:
        identifier = "id"
        fields["id"] = Role.OPTION_ID
    results = Results(options="options", id=identifier, fields=fields)
    note = (
        f"results served under 'options', each named by {identifier!r}; "
        "an agent's own results read where they list objects with an id"
    )
    return ToolMeaning(
        **{**meaning.__dict__, "results": results, "inferred": (*meaning.inferred, note)}
    )


def _kind(name: str) -> Kind:
    lowered = name.lower()
    if _WRITES.search(lowered):
        return Kind.COMMIT
    if _READS.search(lowered):
        return Kind.LOOKUP
    return Kind.OTHER


def _action(tool: Function) -> Action:
    words = " ".join([tool.name, *tool.properties()]).lower()
    return Action.REFUND if _MONEY.search(words) else Action.BOOK


def role_of(argument: str, schema: object, kind: Kind) -> Role:
    lowered = argument.lower()
    if isinstance(schema, dict) and (role := _FORMATS.get(str(schema.get("format")))):
        return role
    for pattern, role in _ROLES:
        if pattern.search(lowered):
            return role
    if kind is Kind.COMMIT and ID_NAME.search(lowered):
        return Role.OPTION_ID
    return Role.CONTEXT


def describe(meanings: dict[str, ToolMeaning]) -> list[str]:
    """One line per tool, as `runscenarios` prints it, marking what was inferred."""
    lines = []
    for meaning in meanings.values():
        args = ", ".join(f"{name}={role}" for name, role in meaning.args.items()) or "no arguments"
        guessed = f" (inferred: {'; '.join(meaning.inferred)})" if meaning.inferred else ""
        lines.append(f"{meaning.name}: {meaning.kind} for {meaning.action}, {args}{guessed}")
    return lines
