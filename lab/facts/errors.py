"""Why a constraint list was refused, named by the path of the offending value."""

from __future__ import annotations

from pydantic import ValidationError


class ConstraintListError(ValueError):
    """A constraint list that does not validate; path points at the bad value ("hours.sat")."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


def error_from_validation(error: ValidationError) -> ConstraintListError:
    """The first problem pydantic found, with its location written as a path."""
    first = error.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    return ConstraintListError(error_path(first["loc"]) or "(the list)", message)


def error_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location written as a path: ("hours", "sat") is "hours.sat"."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path
