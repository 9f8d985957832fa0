"""The scenario contract schema and its identity (SHA-256 of RFC 8785 canonical JSON).

Pure: no Django, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from lab.events.chain import digest
from lab.events.vocabulary import Action
from lab.scenarios.line import PhoneLine
from lab.scenarios.meaning import CallerMeaning
from lab.scenarios.persona import Persona


class AssertionKind(StrEnum):
    SUPERSEDED_PROPOSAL_EXPIRED = "superseded_proposal_expired"
    COMMIT_USES_LATEST_REVISION = "commit_uses_latest_revision"
    COMMIT_CONFIRMED_EXPLICITLY = "commit_confirmed_explicitly"
    AWAITS_CONFIRMATION = "awaits_confirmation"
    POSITIVE_TALK_NOT_CONFIRMATION = "positive_talk_not_confirmation"
    LOOKUP_FAILURE_RECORDED = "lookup_failure_recorded"
    READ_RETRIED_AT_MOST_ONCE = "read_retried_at_most_once"
    NO_INVENTED_RESULT = "no_invented_result"
    INTERRUPTION_EXPIRES_PROPOSAL = "interruption_expires_proposal"
    READBACK_HEARD_OUT = "readback_heard_out"
    SINGLE_EXECUTION = "single_execution"
    NO_UNSUPPORTED_CLAIM_SPOKEN = "no_unsupported_claim_spoken"
    GROUNDED_ANSWERS_CITE = "grounded_answers_cite"
    NO_ORPHAN_CITATION = "no_orphan_citation"
    UNCOVERED_QUESTION_DECLINED = "uncovered_question_declined"
    LATEST_REQUEST_EXECUTED = "latest_request_executed"
    COMMIT_OUTCOME_RECORDED = "commit_outcome_recorded"
    ONE_COMMIT_PER_CONFIRMATION = "one_commit_per_confirmation"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CallerLine(_Strict):
    """One scripted caller line and when it is spoken.

    after: start = once the greeting is over; agent_idle = once the agent has answered
    the previous line; proposal = once a new proposal has been read back in full, or, when none
    comes, once the agent's turn is over and a short bound has passed (the cue is recorded missed).
    commit_started = pause_ms after the agent starts the write the previous line (a
    confirmation) asked for, while it is in flight, or, when none starts, once its turn is over.
    into_readback_ms: instead, speak this long after the next readback starts (barge-in), or as a
    plain line when no readback comes within the bound.
    means: what the line means, the referee's reading of it when an outside agent is tested.
    hang_up_on: the caller hangs up as soon as the agent starts a write after this line (the
    last line only), so the run ends while the write is in flight.
    """

    say: str = Field(min_length=1, max_length=300)
    after: Literal["start", "agent_idle", "proposal", "commit_started"] = "agent_idle"
    into_readback_ms: int | None = Field(default=None, ge=0)
    pause_ms: int = Field(default=500, ge=0, le=10000)
    means: CallerMeaning | None = None
    hang_up_on: Literal["commit"] | None = None

    # Left out of the canonical form while unset, so contracts written before keep their hash.
    @model_serializer(mode="wrap")
    def _omit_unset_meaning(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("means", "hang_up_on"):
            if getattr(self, name) is None:
                data.pop(name, None)
        return data


class Fault(_Strict):
    """A fault the tool sandbox injects: the given attempt of an operation fails.

    lost_answer (commits only): the write is done, but its answer is lost on the way back, as a
    network drop after the request was sent loses it; the agent hears only that it may have run.
    slow: the attempt answers late_result_after_ms late at the least, and the lab waits that much
    longer for it (slow by design, not lost); where a line is cued on commit_started, not before
    that line is understood, so it is heard mid-write however slow recognition is.
    """

    operation: Literal["lookup", "commit"]
    attempt: int = Field(ge=1)
    kind: Literal["timeout", "error", "lost_answer", "slow"]
    late_result_after_ms: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _lost_answers_are_writes(self) -> Fault:
        if self.kind == "lost_answer" and self.operation != "commit":
            raise ValueError("only a commit's answer can be lost: a lookup writes nothing")
        if self.kind == "slow" and not self.late_result_after_ms:
            raise ValueError("a slow attempt needs late_result_after_ms: how late it answers")
        return self


class Assertion(_Strict):
    """One claim the evaluator checks against the log.

    required=False marks one of the lab's invariants: it must hold wherever the run exercises
    it, and a run that never exercises it is not held INCONCLUSIVE for that alone.
    """

    id: str = Field(pattern=r"^[a-z][a-z0-9_]{1,63}$")
    kind: AssertionKind
    description: str = Field(min_length=1)
    required: bool = True

    # Left out of the canonical form while True, so contracts written before keep their hash.
    @model_serializer(mode="wrap")
    def _omit_required_default(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.required:
            data.pop("required", None)
        return data


ToolName = Literal["calendar", "ledger"]


class Contract(_Strict):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]{1,63}$")
    version: int = Field(ge=1)
    title: str
    summary: str
    instructions: list[str] = Field(min_length=1)
    # One tool, or several for a free call that may book and refund in the same call.
    tool: ToolName | list[ToolName]
    # Empty for a free call: the caller is a person, or `runscenarios --free FILE`.
    caller: list[CallerLine] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)
    assertions: list[Assertion] = Field(min_length=1)
    # Block an answer that had retrieval context and cites none of it. Left out of the
    # canonical form while unset, so contracts written before keep their hash.
    require_citation: bool | None = None
    # The impaired phone line the scripted caller speaks over (voice runs); left out of the
    # canonical form while unset, as require_citation is.
    line: PhoneLine | None = None
    # Who the scripted caller is, for what the agent asks that no line says; left out of the
    # canonical form while unset, as line is.
    persona: Persona | None = None

    @model_serializer(mode="wrap")
    def _omit_unset_options(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("require_citation", "line", "persona"):
            if getattr(self, name) is None:
                data.pop(name, None)
        return data

    @model_validator(mode="after")
    def _line_fits_the_script(self) -> Contract:
        if self.line is None:
            return self
        if not self.caller:
            raise ValueError("a phone line impairs the scripted caller; this contract has none")
        if self.line.highest_line >= len(self.caller):
            raise ValueError(
                f"the line names caller line {self.line.highest_line}; "
                f"the script has lines 0 to {len(self.caller) - 1}"
            )
        return self

    @model_validator(mode="after")
    def _hang_up_ends_the_script(self) -> Contract:
        if any(line.hang_up_on for line in self.caller[:-1]):
            raise ValueError("only the last caller line can hang up: nothing is said after it")
        return self

    @model_validator(mode="after")
    def _writes_follow_a_go_ahead(self) -> Contract:
        # Only a confirmation starts a write, so a line waiting for one after any other line
        # would wait for nothing and be said as a plain line: refused, naming the line.
        for number, line in enumerate(self.caller):
            if line.after != "commit_started":
                continue
            before = self.caller[number - 1] if number else None
            if before is None or before.means is None or before.means.kind != "confirmation":
                raise ValueError(
                    f"caller line {number} waits for commit_started, but "
                    + (
                        f"line {number - 1} is not meant as a confirmation"
                        if before
                        else "it is the first line"
                    )
                    + ": only a go-ahead starts a write"
                )
        return self

    @field_validator("tool")
    @classmethod
    def _tools_listed_once(cls, tool: ToolName | list[ToolName]) -> ToolName | list[ToolName]:
        if isinstance(tool, list) and (not tool or len(set(tool)) != len(tool)):
            raise ValueError("a list of tools must name each tool once, and at least one")
        return tool

    @property
    def tools(self) -> tuple[ToolName, ...]:
        return tuple(self.tool) if isinstance(self.tool, list) else (self.tool,)

    @property
    def tools_label(self) -> str:
        return " + ".join(self.tools)

    @property
    def scripted(self) -> bool:
        return bool(self.caller)

    @property
    def annotated(self) -> bool:
        """Whether every scripted line says what it means (the referee then judges on that)."""
        return self.scripted and all(line.means is not None for line in self.caller)

    @property
    def contract_hash(self) -> str:
        return contract_hash(self)

    def unknown_actions(self, known: Collection[Action]) -> list[str]:
        """Each caller line whose meaning names an action outside `known` (the lab's own and
        the tools file's), by line and field: a typo ("bok") is any action name's shape."""
        names = ", ".join(sorted(str(action) for action in known))
        return [
            f"caller[{index}].means.action {str(line.means.action)!r} ({line.say[:40]!r}) is "
            f"no action the lab or the tools file knows; known: {names}"
            for index, line in enumerate(self.caller)
            if line.means and line.means.action and line.means.action not in known
        ]


def contract_hash(contract: Contract) -> str:
    return digest(contract.model_dump(mode="json"))
