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
    path = ""
    for part in first["loc"]:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    message = str(first["msg"]).removeprefix("Value error, ")
    return ConstraintListError(path or "(the list)", message)
