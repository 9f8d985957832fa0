"""An agent's own tools, served and read in its own shapes from the lab's sandbox. Pure.

`read` turns a call (its name, its arguments as the agent wrote them) into the lab's terms: an
operation, an action and the args the gate and the sandbox take. `answer_*` writes what the
sandbox answered back in the agent's result shape, and `read_options` reads the options out of
a result an agent's own tool returned (a bot that runs its own tools, with its own ids).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lab.agent_tools.inference import ToolMeaning, resolve, role_of
from lab.agent_tools.observed import results_of
from lab.agent_tools.schema import Kind, Results, Role, ToolsFile
from lab.agent_tools.values import (
    read_cents,
    read_datetime,
    write_day,
    write_time,
)
from lab.events.actions import LAB_ACTIONS, SHAPES, Shape, ShapeName, shape_of
from lab.events.chain import digest
from lab.events.types import Action, Args, Operation
from lab.language.days import Week

_MAX_OPTIONS = 50


class Refused(ValueError):
    """A call the lab cannot read into its terms; the message names the tool and the argument."""


@dataclass(frozen=True)
class LabCall:
    """One call in the lab's terms; `context` keeps the arguments that are the agent's own."""

    tool: str
    operation: Operation
    action: Action
    args: Args
    context: dict[str, Any] = field(default_factory=dict)


class Toolset:
    """A tools file with every meaning resolved, on the calendar's week."""

    def __init__(self, file: ToolsFile, week: Week | None) -> None:
        self.file = file
        # The file's own `today` sets the week its days are read against; else the lab's.
        self.own_week = file.week()
        self.week = self.own_week or week
        self.meanings: dict[str, ToolMeaning] = resolve(file)
        # The actions the file declares beyond the lab's book and refund, and their shapes.
        self.shapes: dict[Action, Shape] = {
            Action(name): SHAPES[shape] for name, shape in file.actions.items()
        }
        self.digest = digest(file.model_dump(mode="json"))

    @property
    def actions(self) -> frozenset[Action]:
        return frozenset(m.action for m in self.meanings.values() if m.kind is not Kind.OTHER)

    @property
    def known_actions(self) -> frozenset[Action]:
        """What a scenario played with this file may mean: the lab's, the file's, its tools'."""
        return frozenset(LAB_ACTIONS) | frozenset(self.shapes) | self.actions

    def functions(self) -> list[dict[str, Any]]:
        """The agent's own definitions, as its Chat Completions `tools` list has them."""
        return [
            {"type": "function", "function": tool.model_dump(mode="json")}
            for tool in self.file.tools
        ]

    def mapping(self) -> dict[str, dict[str, Any]]:
        """The meaning each tool was read with, for the report and the page."""
        return {
            name: {
                "kind": str(m.kind),
                "action": str(m.action),
                "args": {argument: str(role) for argument, role in m.args.items()},
                "results": m.results.model_dump(mode="json") if m.results else None,
                "inferred": list(m.inferred),
            }
            for name, m in self.meanings.items()
        }

    def shape(self, action: Action) -> Shape:
        """What the action's requests, options and readbacks carry."""
        return shape_of(action, self.shapes)

    def read(self, name: str, arguments: Mapping[str, Any], known: Mapping[str, Args]) -> LabCall:
        """The call in the lab's terms; known: the options lookups listed so far, by their id."""
        meaning = self.meanings.get(name)
        if meaning is None:
            offered = ", ".join(self.meanings)
            raise Refused(f"no tool {name!r} on this call; offered: {offered}")
        if meaning.kind is Kind.OTHER:
            raise Refused(f"{name} is neither a lookup nor a material action in this test")
        request, context = self._request(meaning, arguments)
        if meaning.kind is Kind.LOOKUP:
            return LabCall(name, Operation.LOOKUP, meaning.action, request, context)
        chosen = _chosen(self.shape(meaning.action), request, known)
        return LabCall(name, Operation.COMMIT, meaning.action, chosen)

    def _request(
        self, meaning: ToolMeaning, arguments: Mapping[str, Any]
    ) -> tuple[Args, dict[str, Any]]:
        request: Args = {}
        context: dict[str, Any] = {}
        for argument, value in arguments.items():
            role = meaning.args.get(argument, Role.CONTEXT)
            if value is None or role is Role.CONTEXT:
                context[argument] = value
                continue
            read = self._value(role, value)
            if not read:
                raise Refused(
                    f"{meaning.name}.{argument}: {value!r} is not a {role.value.replace('_', ' ')}"
                    f"{_EXAMPLES.get(role, '')}"
                )
            request.update(read)
        return request, context

    def _value(self, role: Role, value: Any) -> Args:
        day, time = read_datetime(value, self.week, own_week=self.own_week is not None)
        if day and time and role in (Role.DAY, Role.TIME, Role.DATETIME):
            return {"day": day, "time": time}  # a date-time wherever a day or time was expected
        match role:
            case Role.DAY:
                return {"day": day} if day else {}
            case Role.TIME:
                return {"time": time} if time else {}
            case Role.PART_OF_DAY:
                text = str(value).strip().lower()
                return {"part_of_day": text} if text in ("morning", "afternoon", "evening") else {}
            case Role.OPTION_ID:
                return {"option_id": str(value)} if str(value).strip() else {}
            case Role.ORDER:
                order = str(value).strip().lstrip("#")
                return {"order_number": order} if order else {}
            case Role.AMOUNT_CENTS | Role.AMOUNT:
                cents = read_cents(value, whole_units=role is Role.AMOUNT)
                return {"amount_cents": cents} if cents else {}
        return {}

    def answer_lookup(self, name: str, options: list[Args]) -> dict[str, Any]:
        """What the sandbox listed, in the result shape the tool's meaning names."""
        meaning = self.meanings[name]
        results = meaning.results
        assert results is not None  # a resolved lookup always has its results
        listed = [self._option_out(meaning, option) for option in options[:_MAX_OPTIONS]]
        answer: Any = listed
        for key in reversed(results.options.split(".") if results.options else []):
            answer = {key: answer}
        return answer if isinstance(answer, dict) else {"options": answer}

    def _option_out(self, meaning: ToolMeaning, option: Args) -> dict[str, Any]:
        assert meaning.results is not None
        out: dict[str, Any] = {}
        for key, role in meaning.results.fields.items():
            value = self._write(meaning, role, option)
            if value is not None:
                out[key] = value
        if meaning.results.id:
            out.setdefault(meaning.results.id, option.get(self.shape(meaning.action).key))
        return out

    def _write(self, meaning: ToolMeaning, role: Role, option: Args) -> Any:
        day, time = str(option.get("day", "")), str(option.get("time", ""))
        match role:
            case Role.OPTION_ID:
                return option.get(self.shape(meaning.action).key)
            case Role.DAY if day:
                return write_day(day, meaning.day_format, self.week)
            case Role.TIME if time:
                return write_time(time, meaning.time_format)
            case Role.DATETIME if day and time and self.week:
                return f"{self.week.date_of(day).isoformat()}T{time}:00"
            case Role.ORDER:
                return option.get("order_number")
            case Role.AMOUNT_CENTS:
                return option.get("max_amount_cents")
            case Role.AMOUNT if isinstance(cents := option.get("max_amount_cents"), int):
                return f"{cents / 100:.2f}"
        return None

    def read_options(self, name: str, result: Any) -> list[Args] | None:
        """The options an agent's own lookup returned, in the lab's terms (its ids kept); None
        when the result lists none the lab can read. Raises AmbiguousResult (fail closed)."""
        meaning = self.meanings.get(name)
        if meaning is None or meaning.kind is not Kind.LOOKUP:
            return None
        inferred = self.results_read(name, result)
        results = inferred or meaning.results
        items: Any = None
        if results and results.options:
            items = _at(result, results.options)
        elif inferred:
            items = result  # the result itself is the list
        if not isinstance(items, list):
            items = _first_list(result)
        if items is None:
            return None
        fields = dict(results.fields) if results else {}
        if results and results.id:
            # The field the file names as the id identifies an option, whatever it is called.
            fields.setdefault(results.id, _ID_ROLE[self.shape(meaning.action).name])
        options = [self._option_in(meaning, item, fields) for item in items[:_MAX_OPTIONS]]
        return [option for option in options if option is not None]

    def results_read(self, name: str, result: Any) -> Results | None:
        """Where a lookup the file gave no `results` lists its options in this result of its
        own, inferred from the result; None when the file says or no list has an id field."""
        meaning = self.meanings.get(name)
        if meaning is None or meaning.kind is not Kind.LOOKUP or meaning.results_given:
            return None
        ids = {
            argument
            for other in self.meanings.values()
            if other.kind is Kind.COMMIT and other.action is meaning.action
            for argument, role in other.args.items()
            if role is _ID_ROLE[self.shape(meaning.action).name]
        }
        return results_of(result, ids)

    def _option_in(
        self, meaning: ToolMeaning, item: Any, fields: Mapping[str, Role]
    ) -> Args | None:
        if not isinstance(item, dict):
            return None
        shape = self.shape(meaning.action)
        roles = {key: fields.get(key) or _item_role(key) for key in item}
        read: Args = {}
        for key, role in roles.items():
            if role is Role.OPTION_ID:
                read[shape.key] = str(item[key])
            elif role is not None:
                read.update(self._value(role, item[key]))
        read.pop("option_id", None)
        if shape.capped is not None and shape.capped in read:
            # An amount a lookup lists on an order is the most it can refund, as the lab's own
            # ledger lists it; the readback's amount is grounded against it.
            read[f"max_{shape.capped}"] = read.pop(shape.capped)
        return read if all(key in read for key in shape.needed) else None


# The role of the field that names a listed option: a slot's own id; an order is its number.
_ID_ROLE: dict[ShapeName, Role] = {"slot": Role.OPTION_ID, "amount": Role.ORDER}
_EXAMPLES = {
    Role.DAY: " (e.g. 'Tuesday' or '2025-03-11')",
    Role.TIME: " (e.g. '09:30', '9:30 AM')",
    Role.DATETIME: " (e.g. '2025-03-11T09:30')",
    Role.PART_OF_DAY: " (morning, afternoon or evening)",
    Role.AMOUNT_CENTS: " (a positive whole number of cents)",
    Role.AMOUNT: " (e.g. '12.50')",
}


def _chosen(shape: Shape, request: Args, known: Mapping[str, Args]) -> Args:
    """A commit's args: the listed option its id (or its day and time) names, else what it said
    (an option no lookup listed is still an attempt, for the gate and the sandbox to refuse)."""
    option_id = request.pop("option_id", None)
    if not shape.listed_by_id:
        return request
    if isinstance(option_id, str) and option_id in known:
        return dict(known[option_id])
    if option_id is None:
        for option in known.values():
            if all(option.get(k) == request.get(k) for k in shape.matched) and request:
                return dict(option)
    chosen: Args = dict(request)
    if option_id is not None:
        chosen[shape.key] = option_id
    return chosen


def _at(value: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _first_list(value: Any, depth: int = 0) -> list[Any] | None:
    """The first list of objects in a result, breadth first, a few levels deep."""
    if isinstance(value, list) and any(isinstance(item, dict) for item in value):
        return value
    if not isinstance(value, dict) or depth > 4:
        return None
    for child in value.values():
        if isinstance(child, list) and any(isinstance(item, dict) for item in child):
            return child
    for child in value.values():
        if (found := _first_list(child, depth + 1)) is not None:
            return found
    return None


def _item_role(key: str) -> Role | None:
    """A listed option's field read by its name, as arguments are (an id names the option)."""
    role = role_of(key, None, Kind.COMMIT)
    return None if role is Role.CONTEXT else role
