"""The Chat Completions wire, as the lab's connector speaks it. Pure: no I/O, no clock.

Replies (whole, or streamed as server-sent events) are read into one `AssistantReply`; text is
cut into sentences as it arrives; the conversation is kept as the API's list of messages.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lab.connectors.interface import Cut, ToolCall, ToolResult
from lab.retrieval.window import RetrievedChunk

Message = dict[str, Any]
# A sentence ends at . ! or ? (closing quotes or brackets may follow) before whitespace, so
# "$4.50" and "9:00" stay whole.
_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]]*\s+")
KNOWLEDGE_HEADER = (
    "Knowledge base excerpts for the caller's next message, best first; "
    "cite the one you answer from as [KB-n]."
)
_NOTHING_FOUND = "(nothing found)"
_CHUNK_LINE = re.compile(r"^\[KB-\d+\] \(([^;]+); relevance (-?\d+(?:\.\d+)?)\) (.*)$")


class Malformed(ValueError):
    """A reply that does not follow the Chat Completions format."""


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Function(_Loose):
    name: str | None = None
    arguments: str | None = None


class _ToolCallPart(_Loose):
    index: int | None = None
    id: str | None = None
    function: _Function | None = None


class _Message(_Loose):
    content: str | None = None
    tool_calls: list[_ToolCallPart] | None = None


class _Choice(_Loose):
    message: _Message | None = None
    delta: _Message | None = None
    finish_reason: str | None = None


class _Response(_Loose):
    model: str | None = None
    choices: list[_Choice] | None = None


@dataclass
class _PendingCall:
    call_id: str | None = None
    name: str = ""
    arguments: str = ""


@dataclass
class AssistantReply:
    """One assistant message: its text, the tool calls it asked for, the model that wrote it."""

    content: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    raw_calls: list[Message] = field(default_factory=list)
    model: str | None = None
    # "length": the model stopped at its token limit, mid-reply.
    finish_reason: str | None = None

    def message(self) -> Message:
        """The assistant message as the conversation keeps it."""
        message: Message = {"role": "assistant", "content": self.content or None}
        if self.raw_calls:
            message["tool_calls"] = self.raw_calls
        return message


def _response(data: str) -> _Response:
    try:
        return _Response.model_validate_json(data)
    except ValidationError as error:
        raise Malformed(f"not a Chat Completions object: {_excerpt(data)}") from error


def _excerpt(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _finish(
    content: str, pending: list[_PendingCall], model: str | None, finish_reason: str | None
) -> AssistantReply:
    reply = AssistantReply(content=content, model=model, finish_reason=finish_reason)
    for number, part in enumerate(pending, start=1):
        if not part.name:
            raise Malformed(f"tool call {number} has no function name")
        call_id = part.call_id or f"call_{number}"
        reply.calls.append(ToolCall(call_id, part.name, parse_arguments(part.name, part.arguments)))
        reply.raw_calls.append(
            {
                "id": call_id,
                "type": "function",
                "function": {"name": part.name, "arguments": part.arguments or "{}"},
            }
        )
    return reply


def parse_arguments(name: str, raw: str) -> dict[str, Any]:
    """A tool call's arguments: a JSON object (an empty string counts as none)."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as error:
        raise Malformed(f"{name}: arguments are not JSON: {_excerpt(raw)}") from error
    if not isinstance(value, dict):
        raise Malformed(f"{name}: arguments are not a JSON object: {_excerpt(raw)}")
    return value


def read_reply(body: str) -> AssistantReply:
    """A whole (non-streamed) response body."""
    response = _response(body)
    if not response.choices or response.choices[0].message is None:
        raise Malformed(f"no choices[0].message in the reply: {_excerpt(body)}")
    message = response.choices[0].message
    pending = [
        _PendingCall(
            call_id=part.id,
            name=(part.function.name or "") if part.function else "",
            arguments=(part.function.arguments or "") if part.function else "",
        )
        for part in message.tool_calls or []
    ]
    return _finish(
        message.content or "", pending, response.model, response.choices[0].finish_reason
    )


class StreamReader:
    """Reads a streamed reply line by line; `feed` returns the text the line added."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.pending: dict[int, _PendingCall] = {}
        self.model: str | None = None
        self.finish_reason: str | None = None
        self.done = False
        self.chunks = 0

    def feed(self, line: str) -> str:
        line = line.rstrip("\r")
        if not line.startswith("data:"):
            return ""  # blank separators, comments, event: and id: lines
        data = line[5:].strip()
        if data == "[DONE]":
            self.done = True
            return ""
        chunk = _response(data)
        self.chunks += 1
        self.model = chunk.model or self.model
        if not chunk.choices:
            return ""  # a usage-only chunk
        self.finish_reason = chunk.choices[0].finish_reason or self.finish_reason
        delta = chunk.choices[0].delta or chunk.choices[0].message
        if delta is None:
            raise Malformed(f"a stream chunk with no delta: {_excerpt(data)}")
        for position, part in enumerate(delta.tool_calls or []):
            index = part.index if part.index is not None else position
            pending = self.pending.setdefault(index, _PendingCall())
            pending.call_id = part.id or pending.call_id
            if part.function is not None:
                pending.name += part.function.name or ""
                pending.arguments += part.function.arguments or ""
        if delta.content:
            self.content.append(delta.content)
            return delta.content
        return ""

    def finish(self) -> AssistantReply:
        if self.chunks == 0:
            raise Malformed("the stream ended before any chunk")
        pending = [self.pending[index] for index in sorted(self.pending)]
        return _finish("".join(self.content), pending, self.model, self.finish_reason)


class Sentences:
    """Cuts text into whole sentences as it arrives; `rest` is what is left at the end."""

    def __init__(self) -> None:
        self._buffer = ""

    def feed(self, text: str) -> list[str]:
        self._buffer += text
        sentences = []
        while match := _SENTENCE_END.search(self._buffer):
            sentence = self._buffer[: match.end()].strip()
            self._buffer = self._buffer[match.end() :]
            if sentence:
                sentences.append(sentence)
        return sentences

    def rest(self) -> list[str]:
        rest, self._buffer = self._buffer.strip(), ""
        return [rest] if rest else []


def split_sentences(text: str) -> list[str]:
    sentences = Sentences()
    return sentences.feed(text) + sentences.rest()


def tool_message(result: ToolResult) -> Message:
    """The lab's answer to one tool call, as a `tool` message."""
    body = result.wire
    if body is None:
        body = {"kind": result.kind, "content": result.content, "reason": result.reason}
    return {
        "role": "tool",
        "tool_call_id": result.call_id,
        "content": json.dumps(body, sort_keys=True),
    }


# The answer a tool call gets in the history while it is still running and the caller speaks
# (pipecat's IN_PROGRESS): its real result follows as a system message once it comes.
PENDING = {"kind": "pending", "reason": "the call is still running; its result will follow"}
_LATE_RESULT = "The result of tool call {call_id}, which was still running, came back: "


def pending_message(call: ToolCall) -> Message:
    return {"role": "tool", "tool_call_id": call.call_id, "content": json.dumps(PENDING)}


def late_result_message(result: ToolResult) -> Message:
    """The result of a call the history answered as pending, when it comes."""
    body = tool_message(result)["content"]
    return {"role": "system", "content": _LATE_RESULT.format(call_id=result.call_id) + body}


def read_late_result(content: str) -> tuple[str, str] | None:
    """(call id, result body) of a late result message; None when the text is not one."""
    head, found, body = content.partition(", which was still running, came back: ")
    prefix = _LATE_RESULT.split("{call_id}")[0]
    if not found or not head.startswith(prefix):
        return None
    return head.removeprefix(prefix), body


def keep_heard(messages: list[Message], cuts: tuple[Cut, ...]) -> None:
    """Cut the latest assistant text back to what the caller heard before they barged in."""
    for cut in cuts:
        for message in reversed(messages):
            content = message.get("content")
            if message.get("role") != "assistant" or not isinstance(content, str):
                continue
            at = content.find(cut.said)
            if at >= 0:
                message["content"] = (content[:at] + cut.heard).strip()
                break


def knowledge_message(chunks: tuple[RetrievedChunk, ...]) -> Message:
    """The lab's retrieval for a turn as the system message a RAG pipeline puts before it."""
    lines = [
        f"[KB-{number}] ({chunk.id}; relevance {chunk.score:.3f}) {chunk.text}"
        for number, chunk in enumerate(chunks, start=1)
    ]
    return {
        "role": "system",
        "content": "\n".join([KNOWLEDGE_HEADER, *(lines or [_NOTHING_FOUND])]),
    }


def read_knowledge(content: str) -> tuple[RetrievedChunk, ...] | None:
    """The chunks of a knowledge message; None when the text is not one."""
    header, _, rest = content.partition("\n")
    if header != KNOWLEDGE_HEADER:
        return None
    chunks = []
    for line in rest.splitlines():
        if match := _CHUNK_LINE.match(line):
            chunk_id, score, text = match.groups()
            chunks.append(RetrievedChunk(id=chunk_id, text=text, score=float(score)))
    return tuple(chunks)
