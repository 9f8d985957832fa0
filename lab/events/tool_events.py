"""Tool calls as the log records them: lookups and their grounds, commits and their outcomes."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
)

from lab.events.vocabulary import (
    Action,
    Args,
    EvolvingPayload,
    PayloadModel,
)


class LookupStarted(PayloadModel):
    type: Literal["tool.lookup.started"] = "tool.lookup.started"
    attempt_id: str
    attempt: int
    revision: int
    action: Action
    query: Args
    authorized_by: str | None = None


class ToolCallInvalid(PayloadModel):
    """A tool call from an agent under test that the lab refused before anything ran."""

    type: Literal["tool.call.invalid"] = "tool.call.invalid"
    call_id: str
    name: str
    reason: str


class ToolCallObserved(PayloadModel):
    """A call an agent ran on its own tools, as it reported it: seen after the fact, never gated.

    The lookup or commit events that follow it (authorized by nothing) are the lab's sandbox
    answering the same call, so the evaluator judges the call against the referee as usual.
    """

    type: Literal["tool.call.observed"] = "tool.call.observed"
    call_id: str
    name: str
    # As the agent reported them (JSON, bounded by the connector), not only the tool's own fields.
    arguments: dict[str, Any]
    result: dict[str, Any] | None


class LookupSucceeded(EvolvingPayload):
    _added_later: ClassVar[tuple[str, ...]] = ("results_read",)

    type: Literal["tool.lookup.succeeded"] = "tool.lookup.succeeded"
    attempt_id: str
    options: list[Args]
    # Where an agent's own result listed these options, when no tools file said (inferred from
    # the result itself: lab/agent_tools/observed.py): its tool, path, id field, fields.
    results_read: dict[str, Any] | None = None


# The calendar's parts of the day as [start, end) hours: the adapter filters by them and the
# agent maps what callers say ("after lunch", "around two") onto them.
PARTS_OF_DAY: dict[str, tuple[int, int]] = {
    "morning": (0, 12),
    "afternoon": (12, 17),
    "evening": (17, 24),
}


def option_grounds(option: Args, args: Args) -> bool:
    """Whether a lookup option grounds args: max_X keys bound args[X], other keys must equal."""
    for key, expected in option.items():
        if key.startswith("max_"):
            value = args.get(key.removeprefix("max_"))
            if not (isinstance(value, int) and isinstance(expected, int) and value <= expected):
                return False
        elif args.get(key) != expected:
            return False
    return True


class LookupFailed(PayloadModel):
    type: Literal["tool.lookup.failed"] = "tool.lookup.failed"
    attempt_id: str
    failure_kind: Literal["timeout", "error"]
    reason: str


class LateResultRejected(PayloadModel):
    """A result that arrived after its attempt had already timed out."""

    type: Literal["tool.late_result.rejected"] = "tool.late_result.rejected"
    attempt_id: str
    reason: str


class Receipt(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    receipt_id: str
    execution_id: str
    idempotency_key: str
    adapter: str
    action: Action
    args: Args


class CommitStarted(PayloadModel):
    type: Literal["tool.commit.started"] = "tool.commit.started"
    attempt_id: str
    idempotency_key: str
    action: Action
    args: Args
    args_hash: str
    revision: int
    proposal_id: str | None
    confirmation_event_id: str | None
    authorized_by: str | None


class CommitSucceeded(PayloadModel):
    """A receipt; replayed=True when an earlier execution's receipt was returned instead."""

    type: Literal["tool.commit.succeeded"] = "tool.commit.succeeded"
    attempt_id: str
    receipt: Receipt
    replayed: bool


CommitFailureKind = Literal["timeout", "error", "conflict", "not_found", "unauthorized"]


class CommitFailed(PayloadModel):
    type: Literal["tool.commit.failed"] = "tool.commit.failed"
    attempt_id: str
    failure_kind: CommitFailureKind
    reason: str


class CommitUncertain(PayloadModel):
    """A commit that did not answer in time: it may still execute, so its outcome is open."""

    type: Literal["tool.commit.uncertain"] = "tool.commit.uncertain"
    attempt_id: str
    reason: str


ReconcileTrigger = Literal["timeout", "error", "run_ending", "recovery"]


class CommitReconciled(PayloadModel):
    """What the sandbox holds for a commit attempt whose outcome was open: a receipt, or none.

    trigger: timeout = an uncertain commit's write answered late; error = the write raised;
    run_ending = the run ended with the write in flight; recovery = found when a run was
    reopened after its process stopped in the write window.
    """

    type: Literal["tool.commit.reconciled"] = "tool.commit.reconciled"
    attempt_id: str
    idempotency_key: str
    receipt: Receipt | None
    replayed: bool = False
    trigger: ReconcileTrigger
    evidence: str

    @property
    def executed(self) -> bool:
        return self.receipt is not None
