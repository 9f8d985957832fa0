"""The small records the evaluator's one pass copies out of a log: one per event the checks read,
holding only the fields they read. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple, Protocol, TypeVar

from lab.events.types import Args, UnderstandingKind


class Located(Protocol):
    @property
    def seq(self) -> int: ...

    @property
    def id(self) -> str: ...


L = TypeVar("L", bound=Located)


# One record per event the checks read, holding only the fields they read. A log is larger than
# any cache, so each pydantic field read is a likely cache miss: the pass reads every field once,
# while the event is hot, and the checks never touch the events again.
class Revised(NamedTuple):
    seq: int
    id: str
    revision: int


class Proposal(NamedTuple):
    seq: int
    id: str
    proposal_id: str
    revision: int
    args: Args
    args_hash: str
    grounded_on: str | None


class Expiry(NamedTuple):
    seq: int
    id: str
    proposal_id: str


class Understanding(NamedTuple):
    seq: int
    id: str
    kind: UnderstandingKind


class CommitBlock(NamedTuple):
    """A gate decision that blocked a commit."""

    seq: int
    id: str
    rests_on: list[str]
    confirmation_event_id: str | None


class CommitStart(NamedTuple):
    seq: int
    id: str
    attempt_id: str
    revision: int
    proposal_id: str | None
    confirmation_event_id: str | None
    args: Args
    args_hash: str
    # None for a commit the gate blocked: it never reached the sandbox with a key.
    idempotency_key: str | None = None


class Settled(NamedTuple):
    """The event that settles a commit attempt: a receipt, a definite failure, a reconciliation."""

    seq: int
    id: str


class CommitSuccess(NamedTuple):
    seq: int
    id: str
    attempt_id: str
    execution_id: str
    idempotency_key: str
    replayed: bool


class LookupStart(NamedTuple):
    seq: int
    id: str
    attempt_id: str
    attempt: int
    revision: int


class LookupSuccess(NamedTuple):
    seq: int
    id: str
    attempt_id: str
    options: list[Args]


class LookupFailure(NamedTuple):
    seq: int
    id: str
    attempt_id: str


class Readback(NamedTuple):
    seq: int
    id: str
    proposal_id: str


class Interruption(NamedTuple):
    seq: int
    id: str
    utterance_event_id: str


class Said(NamedTuple):
    seq: int
    id: str
    purpose: str
    retrieval_event_id: str | None


class Retrieved(NamedTuple):
    seq: int
    id: str
    query: str
    confidence: float


class Graded(NamedTuple):
    seq: int
    id: str
    utterance_event_id: str
    verdict: str
    claim: str | None
    rationale: str
    category: str | None = None


class Grounded(NamedTuple):
    seq: int
    id: str
    utterance_event_id: str
    verdict: str
    orphans: tuple[int, ...]
    retrieved: int


class Blocked(NamedTuple):
    """An answer require_citation stopped before it was spoken."""

    seq: int
    id: str
    retrieval_event_id: str
    reason_kind: str


class Fault(NamedTuple):
    """An agent under test that erred, hung or answered garbage."""

    seq: int
    id: str
    reason: str


class End(NamedTuple):
    seq: int
    id: str
    reason_kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class Execution:
    """A non-replayed receipt and the commit attempt that produced it, if one was recorded."""

    started: CommitStart | None
    succeeded: CommitSuccess

    @property
    def events(self) -> tuple[CommitStart | None, CommitSuccess]:
        return self.started, self.succeeded


def first_after(records: Iterable[L], seq: int) -> L | None:
    for record in records:
        if record.seq > seq:
            return record
    return None
