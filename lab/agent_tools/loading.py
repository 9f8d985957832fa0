"""Reading a tools file from bytes, with an error that names the tool, the field and what was
expected. Pure: the caller reads the file."""

from __future__ import annotations

from pydantic import ValidationError

from lab.agent_tools.schema import ToolsFile

MAX_BYTES = 256 * 1024


class ToolsFileError(ValueError):
    """A tools file the lab refuses; the message says where and what was expected."""


def parse_tools_file(data: bytes | str, *, source: str = "tools file") -> ToolsFile:
    if len(data) > MAX_BYTES:
        raise ToolsFileError(f"{source}: {len(data)} bytes; a tools file is at most {MAX_BYTES}")
    try:
        return ToolsFile.model_validate_json(data)
    except ValidationError as error:
        raise ToolsFileError(f"{source}: {_explained(error)}") from None


def _explained(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_input=False, include_url=False)[:5]:
        where = ".".join(str(part) for part in item["loc"]) or "the file"
        message = item["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}")
    return "; ".join(parts)
