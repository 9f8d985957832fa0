"""What the reference agent reads from a request's messages and writes into its reply. Pure."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from lab.connectors.tool_specs import TOOL_SPECS
from lab.events.types import Args, ProposalMade, Receipt


@dataclass(frozen=True)
class WireCall:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Reply:
    """The next assistant message: what the agent says, and the tool call it waits on."""

    content: str = ""
    calls: list[WireCall] = field(default_factory=list)


def tool_args(name: str, args: Args) -> dict[str, Any]:
    """Only the fields the tool's argument model takes."""
    fields = TOOL_SPECS[name].args_model.model_fields
    return {key: value for key, value in args.items() if key in fields}


def options_of(body: dict[str, Any]) -> list[Args]:
    """What a lookup found, in the shapes a tool result may carry it."""
    content = body.get("content")
    if not isinstance(content, dict):
        return []
    for name in ("options", "slots", "orders"):
        value = content.get(name)
        if isinstance(value, list):
            return [dict(option) for option in value if isinstance(option, dict)]
    order = content.get("order", content)
    if isinstance(order, dict) and "order_number" in order:
        return [dict(order)]
    return []


def text_of(content: object) -> str:
    """A message's text, whether a plain string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def receipt_of(
    body: dict[str, Any], call: WireCall, key: str, proposal: ProposalMade
) -> tuple[Receipt, bool]:
    """The receipt a commit's tool message carries (a bare receipt_id is enough), and whether
    the lab says it replayed an earlier one."""
    content = body.get("content")
    found = content.get("receipt", content) if isinstance(content, dict) else {}
    found = found if isinstance(found, dict) else {}
    receipt_id = str(found.get("receipt_id") or call.call_id)
    receipt = Receipt(
        receipt_id=receipt_id,
        execution_id=str(found.get("execution_id") or receipt_id),
        idempotency_key=key,
        adapter=str(found.get("adapter") or call.name),
        action=proposal.action,
        args=proposal.args,
    )
    return receipt, isinstance(content, dict) and bool(content.get("replayed"))


def tool_body(content: str) -> dict[str, Any]:
    """A tool message's JSON object; a body that is none reads as the tool having failed."""
    try:
        body = json.loads(content)
    except ValueError:
        return {"kind": "failed", "reason": "the tool's answer was not JSON"}
    if not isinstance(body, dict):
        return {"kind": "failed", "reason": "the tool's answer was not an object"}
    return body
