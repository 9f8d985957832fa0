"""Transcripts of calls the lab did not make: one JSON object per line, parsed and checked once.

Pure. A line is `{"call_id", "turn_id", "speaker": "caller" | "agent", "text", "retrieval"}`;
retrieval (agent turns only) is the window the agent had, and `[KB-N]` points at its N-th chunk.
Every problem is reported with the line it is on.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, FiniteFloat, ValidationError

from lab.audit.schema import TURN_ID
from lab.facts.errors import error_path
from lab.grading.schema import GradeRequest
from lab.retrieval.window import RetrievalWindow, RetrievedChunk

MAX_LINE_BYTES = 64 * 1024
MAX_CHUNKS = 50
RETRIEVER = "external"


class TranscriptError(ValueError):
    """Bad input; line is 1-based, None when the problem is the file as a whole."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.message = message


class _Strict(BaseModel):
    # Strict: a score of "0.8" or true is a mistake in the export, not a number to guess at.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class InputChunk(_Strict):
    id: str = Field(min_length=1, max_length=256)
    text: str
    score: FiniteFloat


class TranscriptLine(_Strict):
    call_id: str = Field(pattern=TURN_ID)
    turn_id: str = Field(pattern=TURN_ID)
    speaker: Literal["caller", "agent"]
    text: str = Field(min_length=1)
    retrieval: list[InputChunk] | None = Field(default=None, max_length=MAX_CHUNKS)


class AgentTurn(BaseModel):
    """An agent turn ready to grade, with the caller turn before it in the same call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    line: int
    call_id: str
    turn_id: str
    utterance: str
    caller_turn: str | None
    retrieval: RetrievalWindow | None

    def request(self) -> GradeRequest:
        return GradeRequest(
            utterance=self.utterance, caller_turn=self.caller_turn, retrieval=self.retrieval
        )


def parse_transcript(raw: bytes, *, max_bytes: int) -> tuple[AgentTurn, ...]:
    """Every agent turn of a JSONL transcript, in file order; blank lines are skipped."""
    if len(raw) > max_bytes:
        raise TranscriptError(None, f"the file is over the limit of {max_bytes:,} bytes")
    last_caller: dict[str, str] = {}
    seen: dict[tuple[str, str], int] = {}
    turns: list[AgentTurn] = []
    for number, data in enumerate(raw.split(b"\n"), start=1):
        if not data.strip():
            continue
        line = _parse_line(number, data)
        key = (line.call_id, line.turn_id)
        if key in seen:
            raise TranscriptError(
                number,
                f"turn {line.turn_id!r} of call {line.call_id!r} already appeared "
                f"on line {seen[key]}",
            )
        seen[key] = number
        if line.speaker == "caller":
            if line.retrieval is not None:
                raise TranscriptError(number, "retrieval is only for agent turns")
            last_caller[line.call_id] = line.text
            continue
        turns.append(
            AgentTurn(
                line=number,
                call_id=line.call_id,
                turn_id=line.turn_id,
                utterance=line.text,
                caller_turn=last_caller.get(line.call_id),
                retrieval=_window(line.retrieval),
            )
        )
    if not turns:
        raise TranscriptError(None, "the file has no agent turns to grade")
    return tuple(turns)


def _parse_line(number: int, data: bytes) -> TranscriptLine:
    if len(data) > MAX_LINE_BYTES:
        raise TranscriptError(number, f"the line is over the limit of {MAX_LINE_BYTES:,} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise TranscriptError(number, f"not UTF-8 (byte {error.start + 1})") from None
    try:
        return TranscriptLine.model_validate_json(text)
    except ValidationError as error:
        raise TranscriptError(number, _problem(error.errors()[0])) from None


def _problem(error: Any) -> str:
    """One validation error in words, naming the field (`retrieval[1].score`)."""
    path = error_path(error["loc"])
    kind = error["type"]
    if kind == "json_invalid":
        return f"not a JSON object ({error['msg'].removeprefix('Invalid JSON: ')})"
    if kind == "model_type" and not path:
        return "expected a JSON object"
    if kind == "missing":
        return f"missing field {path!r}"
    if kind == "extra_forbidden":
        return f"unknown field {path!r} (a line has call_id, turn_id, speaker, text, retrieval)"
    shown = repr(error["input"])
    return f"{path}: {error['msg']} (got {shown[:60]}{'…' if len(shown) > 60 else ''})"


def _window(chunks: list[InputChunk] | None) -> RetrievalWindow | None:
    if chunks is None:
        return None
    return RetrievalWindow(
        retriever=RETRIEVER,
        chunks=tuple(RetrievedChunk(id=c.id, text=c.text, score=c.score) for c in chunks),
    )
