"""The sandboxed tools as an outside agent sees them: names, argument models, JSON Schemas.

Pure. The OpenAI-compatible connector offers these as function definitions, the MCP server as
MCP tools, and the reference agents call them; the digest of the offered set goes on run.started.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lab.agent_tools.schema import Function, Kind, Meaning, Results, Role, ToolsFile
from lab.events.chain import digest
from lab.events.types import Action, Operation

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday"]
PartOfDay = Literal["morning", "afternoon", "evening"]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckAvailability(_Args):
    """Free appointment slots on a weekday, optionally within a part of the day or at a time."""

    day: Weekday
    part_of_day: PartOfDay | None = None
    time: str | None = Field(default=None, pattern=r"^\d{2}:\d{2}$")


class BookAppointment(_Args):
    """Book one slot that check_availability returned; only after the caller confirmed it."""

    slot_id: str
    day: Weekday
    time: str = Field(pattern=r"^\d{2}:\d{2}$")


class LookUpOrder(_Args):
    """An order by its number, with the most that can still be refunded on it."""

    order_number: str = Field(pattern=r"^\d{3,8}$")


class IssueRefund(_Args):
    """Refund an amount in cents on an order; only after the caller confirmed it."""

    order_number: str = Field(pattern=r"^\d{3,8}$")
    amount_cents: int = Field(gt=0)


class ToolSpec(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    action: Action
    operation: Operation
    args_model: type[_Args]

    @property
    def description(self) -> str:
        return (self.args_model.__doc__ or "").strip()

    def json_schema(self) -> dict[str, object]:
        return self.args_model.model_json_schema()

    def openai_function(self) -> dict[str, object]:
        """The Chat Completions `tools` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.json_schema(),
            },
        }


TOOL_SPECS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            name="check_availability",
            action=Action.BOOK,
            operation=Operation.LOOKUP,
            args_model=CheckAvailability,
        ),
        ToolSpec(
            name="book_appointment",
            action=Action.BOOK,
            operation=Operation.COMMIT,
            args_model=BookAppointment,
        ),
        ToolSpec(
            name="look_up_order",
            action=Action.REFUND,
            operation=Operation.LOOKUP,
            args_model=LookUpOrder,
        ),
        ToolSpec(
            name="issue_refund",
            action=Action.REFUND,
            operation=Operation.COMMIT,
            args_model=IssueRefund,
        ),
    )
}


@dataclass(frozen=True)
class OwnTool:
    """One of an agent's own tools (its tools file), as MCP lists it."""

    name: str
    description: str
    schema: dict[str, Any]

    def json_schema(self) -> dict[str, Any]:
        return self.schema


def own_tools(file: ToolsFile) -> tuple[OwnTool, ...]:
    return tuple(OwnTool(t.name, t.description, t.parameters) for t in file.tools)


def offered_specs(actions: frozenset[Action]) -> list[ToolSpec]:
    """The tools a run offers, for the actions its scenario allows, in a fixed order."""
    return [spec for spec in TOOL_SPECS.values() if spec.action in actions]


def tool_name(action: Action, operation: Operation) -> str:
    """The wire name of the tool that does this operation for this action."""
    return next(
        s.name for s in TOOL_SPECS.values() if (s.action, s.operation) == (action, operation)
    )


def tools_digest(specs: list[ToolSpec]) -> str:
    """SHA-256 of the canonical JSON of the offered function definitions."""
    return digest([spec.openai_function() for spec in specs])


def lab_tools_file() -> ToolsFile:
    """The lab's own tools described as a team describes its own: the same machinery reads
    them (a bot that runs the lab's tool names on its own tables is read this way)."""
    results = {
        "check_availability": Results(
            options="options",
            id="slot_id",
            fields={"slot_id": Role.OPTION_ID, "day": Role.DAY, "time": Role.TIME},
        ),
        "look_up_order": Results(
            options="options",
            id="order_number",
            fields={"order_number": Role.ORDER, "max_amount_cents": Role.AMOUNT_CENTS},
        ),
    }
    return ToolsFile(
        business="the lab's demo shop",
        tools=[
            Function.model_validate(spec.openai_function()["function"])
            for spec in TOOL_SPECS.values()
        ],
        meanings={
            spec.name: Meaning(
                kind=Kind.LOOKUP if spec.operation is Operation.LOOKUP else Kind.COMMIT,
                action=spec.action,
                results=results.get(spec.name),
                day_format="weekday",
            )
            for spec in TOOL_SPECS.values()
        },
    )
