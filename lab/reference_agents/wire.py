"""The reference server's Chat Completions bodies: the request it reads, the replies it writes.

Pure: the server shell passes in the time and the ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lab.connectors.tool_specs import TOOL_SPECS
from lab.events.types import Action
from lab.reference_agents.messages import Reply, WireCall


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str | None = None
    messages: list[dict[str, Any]] = Field(max_length=2000)
    tools: list[dict[str, Any]] | None = None
    stream: bool = False


def offered_actions(request: ChatRequest) -> frozenset[Action]:
    """The actions whose tools the request offers as functions."""
    names = {
        str(tool.get("function", {}).get("name"))
        for tool in request.tools or []
        if isinstance(tool.get("function"), dict)
    }
    return frozenset(TOOL_SPECS[name].action for name in names if name in TOOL_SPECS)


def _call(call: WireCall) -> dict[str, Any]:
    return {
        "id": call.call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }


def _finish_reason(reply: Reply) -> str:
    return "tool_calls" if reply.calls else "stop"


def completion(reply: Reply, *, model: str, completion_id: str, created: int) -> dict[str, Any]:
    """A whole (non-streamed) chat.completion."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.calls:
        message["tool_calls"] = [_call(call) for call in reply.calls]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
    }


def chunks(
    reply: Reply, *, model: str, completion_id: str, created: int
) -> Iterator[dict[str, Any]]:
    """The same reply as chat.completion.chunk objects: text a word at a time, calls in parts."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    words = reply.content.split(" ") if reply.content else []
    for number, word in enumerate(words):
        yield chunk({"content": word if number == 0 else " " + word})
    for index, call in enumerate(reply.calls):
        arguments = json.dumps(call.arguments)
        half = len(arguments) // 2
        head = {"index": index, "id": call.call_id, "type": "function"}
        yield chunk({"tool_calls": [head | {"function": {"name": call.name, "arguments": ""}}]})
        for part in (arguments[:half], arguments[half:]):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
    yield chunk({}, _finish_reason(reply))


def models(model: str, created: int) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": model, "object": "model", "created": created, "owned_by": "lab"}],
    }


def error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
