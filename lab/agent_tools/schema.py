"""The tools file: an agent's own tool definitions, and what each means to the lab. Pure.

A team writes it once from what it already has (the OpenAI `tools` list its agent is called
with, pipecat `FunctionSchema`s or an MCP tool list) plus, per tool, a meaning: a lookup or a
material action, which arguments carry the caller's request, and where a lookup's result lists
the options. What is left out is inferred (lab/agent_tools/inference.py) and printed.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from lab.events.actions import ShapeName
from lab.events.types import Action
from lab.language.days import Week

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ACTION = re.compile(r"^[a-z][a-z_]{1,31}$")
_PATH = re.compile(r"^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$")


class Role(StrEnum):
    """What one argument (or one field of a listed option) carries of the caller's request."""

    DAY = "day"  # a weekday or a date
    TIME = "time"  # a clock time
    DATETIME = "datetime"  # an ISO date and time in one value
    PART_OF_DAY = "part_of_day"  # morning / afternoon / evening
    OPTION_ID = "option_id"  # the id a lookup listed, naming the option a commit takes
    ORDER = "order_number"
    AMOUNT_CENTS = "amount_cents"
    AMOUNT = "amount"  # in whole currency units ("12.50")
    CONTEXT = "context"  # the agent's own business (party size, a name): kept, not refereed


class Kind(StrEnum):
    LOOKUP = "lookup"
    COMMIT = "commit"
    OTHER = "other"  # neither: the lab answers it as not offered


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Function(_Strict):
    """One tool definition as the agent is called with it (OpenAI's `function` object)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})

    @field_validator("name")
    @classmethod
    def _named(cls, name: str) -> str:
        if not _NAME.match(name):
            raise ValueError(f"{name!r} is not a tool name (letters, digits, _ . -; 1-64)")
        return name

    def properties(self) -> dict[str, Any]:
        found = self.parameters.get("properties", {})
        return found if isinstance(found, dict) else {}


class Results(_Strict):
    """Where a lookup's result lists its options, the field that identifies one, and the rest."""

    options: str = Field(description="dotted path to the list, e.g. data.tables ('' = the top)")
    id: str | None = None
    fields: dict[str, Role] = Field(default_factory=dict)

    @field_validator("options")
    @classmethod
    def _path(cls, path: str) -> str:
        if path and not _PATH.match(path):
            raise ValueError(f"{path!r} is not a dotted path such as data.tables")
        return path


class Meaning(_Strict):
    """What one tool is to the lab. Any field left out is inferred."""

    kind: Kind | None = None
    action: Action | None = None
    args: dict[str, Role] | None = None
    results: Results | None = None
    day_format: Literal["Weekday", "weekday", "iso"] = "Weekday"
    time_format: Literal["24h", "12h"] = "24h"


class ToolsFile(_Strict):
    """The whole file: the agent's tool definitions as they are, and their meanings."""

    format: Literal["lab-tools/1"] = "lab-tools/1"
    business: str = ""
    # The day the business's own days are relative to (ISO date); None: the lab calendar's.
    today: str | None = None
    # Material actions beyond the lab's book and refund (cancel, reschedule, pay), each in the
    # shape of one of them: "slot" (an option listed by id, read back by day and time) or
    # "amount" (an order's number, read back by an amount it caps).
    actions: dict[str, ShapeName] = Field(default_factory=dict, max_length=8)
    tools: list[Function] = Field(min_length=1, max_length=64)
    meanings: dict[str, Meaning] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _shapes(cls, data: Any) -> Any:
        """Take each tool as OpenAI writes it ({type, function}), MCP ({name, inputSchema}) or
        pipecat ({name, properties, required})."""
        if isinstance(data, dict) and isinstance(data.get("tools"), list):
            data = {**data, "tools": [_function(entry) for entry in data["tools"]]}
        return data

    @field_validator("today")
    @classmethod
    def _iso_date(cls, today: str | None) -> str | None:
        if today is None:
            return None
        try:
            return date.fromisoformat(today if _ISO_DAY.match(today) else "").isoformat()
        except ValueError:
            raise ValueError(f"{today!r} is not an ISO date such as 2025-03-09") from None

    def week(self) -> Week | None:
        """The bookable week its `today` sets: Monday to Sunday around the next weekday after
        it (a Sunday's is the week after; a Wednesday's its own); None without one."""
        if self.today is None:
            return None
        today = date.fromisoformat(self.today)
        following = today + timedelta(days=1)
        while following.weekday() > 4:
            following += timedelta(days=1)
        return Week(start=following - timedelta(days=following.weekday()), today=today)

    @model_validator(mode="after")
    def _consistent(self) -> ToolsFile:
        names = [tool.name for tool in self.tools]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"tools: {', '.join(twice)} defined more than once")
        for action in self.actions:
            if action in ("book", "refund") or not _ACTION.match(action):
                raise ValueError(
                    f"actions.{action}: an action beyond book and refund, named in lower-case "
                    "letters and _ (e.g. cancel)"
                )
        for name, meaning in self.meanings.items():
            if meaning.action is not None and meaning.action not in (
                Action.BOOK,
                Action.REFUND,
                *self.actions,
            ):
                raise ValueError(
                    f"meanings.{name}.action: '{meaning.action}' is not book or refund; declare "
                    f'it under actions, e.g. "actions": {{"{meaning.action}": "slot"}}'
                )
            if name not in names:
                raise ValueError(f"meanings.{name}: no tool named {name!r} in tools")
            properties = next(t for t in self.tools if t.name == name).properties()
            for argument in meaning.args or {}:
                if argument not in properties:
                    known = ", ".join(sorted(properties)) or "none"
                    raise ValueError(
                        f"meanings.{name}.args.{argument}: {name} has no argument {argument!r} "
                        f"(its arguments: {known})"
                    )
        return self

    def function(self, name: str) -> Function | None:
        return next((tool for tool in self.tools if tool.name == name), None)


def _function(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    if entry.get("type") == "function" and isinstance(entry.get("function"), dict):
        return entry["function"]
    if "inputSchema" in entry:
        return {
            "name": entry.get("name"),
            "description": entry.get("description", ""),
            "parameters": entry["inputSchema"],
        }
    if "properties" in entry and "parameters" not in entry:
        schema: dict[str, Any] = {"type": "object", "properties": entry["properties"]}
        if "required" in entry:
            schema["required"] = entry["required"]
        return {
            "name": entry.get("name"),
            "description": entry.get("description", ""),
            "parameters": schema,
        }
    return entry
