"""Why a constraint list was refused, named by the path of the offending value."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError


class ConstraintListError(ValueError):
    """A constraint list that does not validate; path points at the bad value ("hours.sat")."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def error_from_validation(
    error: ValidationError, examples: Mapping[str, str] | None = None
) -> ConstraintListError:
    """The first problem pydantic found, with its location written as a path and an example."""
    first = error.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "not a field of the list (a typo?)"
    field = str(first["loc"][0]) if first["loc"] else ""
    example = (examples or {}).get(field)
    if example:
        message += f"; expected e.g. {field}: {example}"
    return ConstraintListError(error_path(first["loc"]) or "(the list)", message)


def error_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location written as a path: ("hours", "sat") is "hours.sat"."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path
