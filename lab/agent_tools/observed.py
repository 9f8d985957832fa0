"""Where an agent's own lookup result lists its options, inferred from the result itself. Pure.

A bot that runs its own tools returns results in its own shape; a tools file with no `results`
for the lookup leaves the lab to find them. The options are the one list of objects (at any
depth, or the result itself) whose items carry an id field: one a commit's id argument names,
else one named `id`, `*_id`, `*_ref`, `ref` or `code`. Each other field is read by its values
(ISO dates and date-times, weekday names, clock times). Two such lists: ambiguous, said so.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Any

from lab.agent_tools.inference import ID_NAME
from lab.agent_tools.schema import Results, Role
from lab.agent_tools.values import read_day, read_time

_MAX_DEPTH = 6


class AmbiguousResult(ValueError):
    """A result with more than one list that could be the options; the message names them."""


def results_of(result: Any, ids: Collection[str]) -> Results | None:
    """The options' path, id field and day/time fields of one observed result; None when no
    list in it has an id field. ids: the argument names the action's commits identify by."""
    found = [
        (path, items, key) for path, items in _lists(result, "", 0) if (key := _id(items, ids))
    ]
    if len(found) > 1:
        paths = " and ".join(repr(path or "(the result itself)") for path, _, _ in found)
        raise AmbiguousResult(f"two lists could be the options, {paths}; name one in `results`")
    if not found:
        return None
    path, items, key = found[0]
    return Results(options=path, id=key, fields=_fields(items, key))


def describe_results(results: Results) -> str:
    """One line for the run's output and the report: where the options were read from."""
    where = repr(results.options) if results.options else "the result itself"
    fields = ", ".join(f"{name}={role}" for name, role in results.fields.items()) or "none"
    return f"options at {where}, each named by {results.id!r}; read by value: {fields}"


def _lists(value: Any, path: str, depth: int) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Every list of objects in a result with its dotted path, not inside another list."""
    if isinstance(value, list):
        items = [item for item in value if isinstance(item, dict)]
        if items:
            yield path, items
        return
    if not isinstance(value, dict) or depth > _MAX_DEPTH:
        return
    for key, child in value.items():
        if isinstance(key, str) and re.fullmatch(r"[A-Za-z0-9_-]+", key):
            yield from _lists(child, f"{path}.{key}" if path else key, depth + 1)


def _id(items: list[dict[str, Any]], ids: Collection[str]) -> str | None:
    """The field naming each item: one a commit's id argument names, else an id-like name."""
    keys = [key for key in items[0] if all(key in item for item in items)]
    named = [key for key in keys if key in ids]
    if named:
        return named[0]
    ranked = sorted(
        (key for key in keys if ID_NAME.search(key.lower())),
        key=lambda key: (key.lower() != "id", not key.lower().endswith("_id")),
    )
    return ranked[0] if ranked else None


def _fields(items: list[dict[str, Any]], id_key: str) -> dict[str, Role]:
    """Each field whose values read as days, times or both on every item that has it."""
    fields: dict[str, Role] = {}
    for key in items[0]:
        if key == id_key:
            continue
        roles = {_role(item[key]) for item in items if key in item}
        if len(roles) == 1 and (role := roles.pop()) is not None:
            fields[key] = role
    return fields


def _role(value: Any) -> Role | None:
    day, time = read_day(value, None), read_time(value)
    if day and time:
        return Role.DATETIME
    return Role.DAY if day else Role.TIME if time else None
