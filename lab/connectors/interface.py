"""What the lab exchanges with any agent under test: caller turns in; speech, tool calls and
the end of its turn out. Pure: no Django, no I/O.

The session hands the agent one caller turn at a time and reads what the agent did from the
async iterator it returns. An agent that reaches the lab's sandboxed tools does so only through
the `ToolBox` it is given, so every call can pass the gate first; a connector that can only
observe an agent's own tools (a pipecat bot's function calls) reports them as `ToolObserved`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

# The identity is an event payload (run.started records it), so the events own its model.
from lab.events.conversation import AgentIdentity, ConnectorKind
from lab.events.phone_events import PhoneBargeIn, PhoneLatency
from lab.retrieval.window import RetrievedChunk


@dataclass(frozen=True)
class Cut:
    """Agent speech a caller turn cut into: the sentence as said and the part the caller heard."""

    said: str
    heard: str


@dataclass(frozen=True)
class CallerTurn:
    """One final caller turn: its text and the id of the caller.utterance event that holds it."""

    text: str
    utterance_event_id: str
    audio: bytes | None = None  # 16 kHz PCM16 mono, on voice runs to agents that take audio
    # What this turn barged into (from agent.interrupted): an LLM's history keeps only what was
    # heard, as pipecat and LiveKit keep it, so the agent knows its readback was cut.
    cut: tuple[Cut, ...] = ()
    # The knowledge-base window the lab retrieved for this turn (its retrieval.done), best
    # first, cited as [KB-n]; None when the lab retrieved nothing for it.
    knowledge: tuple[RetrievedChunk, ...] | None = None


@dataclass(frozen=True)
class ToolCall:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    """What the lab answered a tool call with; `kind` says how it ended, `content` is sent back."""

    call_id: str
    kind: Literal["ok", "blocked", "failed", "invalid"]
    content: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    # The body an agent with its own tools gets back, in its own result shape; None: the lab's
    # own wrapper (kind, content, reason).
    wire: dict[str, Any] | None = None


@dataclass(frozen=True)
class Said:
    """A whole sentence the agent says (streamed replies are cut into sentences as they come)."""

    text: str
    # The agent's own voice for it (16 kHz PCM16 mono), from an agent that speaks for itself;
    # None: the lab's TTS voices it on voice runs.
    audio: bytes | None = None


@dataclass(frozen=True)
class ToolCalled:
    """A call the agent made through the lab's ToolBox, with what the lab answered."""

    call: ToolCall
    result: ToolResult


@dataclass(frozen=True)
class ToolObserved:
    """A call the agent ran on its own tools; the lab saw it but could not stand in front of it."""

    call: ToolCall
    result: dict[str, Any] | None


@dataclass(frozen=True)
class TurnFinished:
    pass


@dataclass(frozen=True)
class LineMeasured:
    """What a connector measured on its line's clock, recorded as it is."""

    payload: PhoneLatency | PhoneBargeIn


def _no_answer() -> float | None:
    return None


def _unheard() -> None:
    return None


@dataclass(frozen=True)
class PlannedBargeIn:
    """A caller line the scenario says cuts into the agent's next readback, into_ms after it
    starts; is_readback says whether what the agent has said so far reads as one.

    answered_s: when (on the event loop's monotonic clock) the agent's latest lookup answered with
    options, None before any: the agent speaks its readback only after that answer reaches it.
    on_spoken: called once the line goes out, ahead of the lab's log recording it.
    """

    text: str
    into_ms: int
    is_readback: Callable[[str], bool]
    answered_s: Callable[[], float | None] = _no_answer
    on_spoken: Callable[[], None] = _unheard


@dataclass(frozen=True)
class AgentFault:
    """The agent erred, hung or answered garbage: recorded, and the run cannot pass."""

    kind: Literal["timeout", "http_error", "malformed", "disconnected", "oversize", "truncated"]
    reason: str


__all__ = [
    "AgentFault",
    "AgentIdentity",
    "AgentOutput",
    "AgentUnderTest",
    "CallerTurn",
    "ConnectorKind",
    "LineMeasured",
    "PlannedBargeIn",
    "Said",
    "ToolBox",
    "ToolCall",
    "ToolCalled",
    "ToolObserved",
    "ToolResult",
    "TurnFinished",
]

AgentOutput = Said | ToolCalled | ToolObserved | TurnFinished | AgentFault | LineMeasured


class ToolBox(Protocol):
    """The run's sandboxed tools as an agent reaches them: through the gate in guarded runs."""

    async def call(self, call: ToolCall) -> ToolResult: ...


class AgentUnderTest(Protocol):
    identity: AgentIdentity

    def greet(self, tools: ToolBox) -> AsyncIterator[AgentOutput]: ...
    def hear(self, turn: CallerTurn, tools: ToolBox) -> AsyncIterator[AgentOutput]: ...
    async def close(self) -> None: ...


@runtime_checkable
class FullDuplex(Protocol):
    """An agent on a live audio line: a planned barge-in is streamed over its own playback, at
    the scenario's point in its audio, not once the lab has heard its turn out."""

    async def plan_barge_in(self, plan: PlannedBargeIn) -> None: ...


@runtime_checkable
class Interjecting(Protocol):
    """An agent that hears the caller while its own tool call is still running (a slow write),
    as pipecat's and LiveKit's loops do; returns once the agent has answered the caller."""

    async def interject(self, turn: CallerTurn) -> None: ...


@runtime_checkable
class CallNamed(Protocol):
    """An agent told the lab's id of its call on its own wire (Twilio's customParameters): its
    tool calls to the HTTP sandbox name the run by it; any other is named by the run's id."""

    call_id: str


@runtime_checkable
class SelfIdentifying(Protocol):
    """An agent that asks its server who it is before run.started records its identity; it
    bounds the question itself and keeps what it knew when the server does not answer."""

    async def identify(self) -> None: ...
