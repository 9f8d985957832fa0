"""What verifying a report concludes: each check's result, and the verification as a whole.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from lab.evaluation.verdicts import Evaluation, Verdict
from lab.reports.findings import Finding
from lab.reports.schema import Report
from lab.scenarios.contracts import Contract

MAX_LISTED_FINDINGS = 50
_SHOWN = 12  # hex digits of a hash shown in a reason


class Check(StrEnum):
    STRUCTURE = "structure"
    CONTRACT = "contract"
    INTEGRITY = "integrity"
    ORIGIN = "origin"
    REEVALUATION = "re-evaluation"
    REGRADE = "re-grade"


class Status(StrEnum):
    OK = "ok"
    NOTICE = "notice"
    FAILED = "failed"
    NOT_RUN = "not run"


class ContractStatus(StrEnum):
    IDENTICAL = "identical"
    CHANGED = "changed"
    UNKNOWN_VERSION = "unknown version"
    UNKNOWN_ID = "unknown scenario"


class Origin(StrEnum):
    """Who vouches for the bytes: a result of its own, beside consistency."""

    VALID_LAB = "signed by this lab"
    VALID_TRUSTED = "signed by a key you trust"
    UNKNOWN_KEY = "signed by an unknown key"
    INVALID = "signature invalid"
    ABSENT = "unsigned"

    @property
    def proven(self) -> bool:
        """This lab's key or one the reader trusts signed exactly these bytes."""
        return self in (Origin.VALID_LAB, Origin.VALID_TRUSTED)


@dataclass(frozen=True, slots=True)
class CheckResult:
    check: Check
    summary: str
    findings: tuple[Finding, ...] = ()
    ran: bool = True

    @property
    def status(self) -> Status:
        if not self.ran:
            return Status.NOT_RUN
        if any(f.blocking for f in self.findings):
            return Status.FAILED
        return Status.NOTICE if self.findings else Status.OK

    @property
    def number(self) -> int:
        return list(Check).index(self.check) + 1


@dataclass(frozen=True, slots=True)
class Difference:
    """One value the file states beside the value derived from its events."""

    path: str
    stated: str
    derived: str


@dataclass(frozen=True, slots=True)
class TurnRegrade:
    """One agent turn's grade and grounding as the log states them and as derived now."""

    utterance_event_id: str
    text: str
    stated_verdict: str | None  # None: the log holds no turn.graded for it
    derived_verdict: str
    stated_grounding: str | None
    derived_grounding: str
    differences: tuple[Difference, ...]
    # Ungraded because the run stopped before its grade was recorded (not a difference).
    incomplete: bool = False

    @property
    def matches(self) -> bool:
        return not self.differences


@dataclass(frozen=True, slots=True)
class Regrade:
    """Every agent turn re-graded against the report's embedded constraint list."""

    constraint_list_version: str
    turns: tuple[TurnRegrade, ...]

    @property
    def mismatched(self) -> int:
        return sum(not turn.matches and not turn.incomplete for turn in self.turns)

    @property
    def incomplete(self) -> int:
        return sum(turn.incomplete for turn in self.turns)


@dataclass(frozen=True)
class Verification:
    checks: tuple[CheckResult, ...]
    report: Report | None = None
    contract_status: ContractStatus | None = None
    contract_source: Literal["canonical", "embedded"] | None = None
    contract_used: Contract | None = None
    derived: Evaluation | None = None
    differences: tuple[Difference, ...] = ()
    origin: Origin | None = None
    regrade: Regrade | None = None

    @property
    def rejected(self) -> bool:
        """Structure failed: the file could not be read as a report at all."""
        return self.report is None

    @property
    def consistent(self) -> bool:
        return not self.rejected and not any(
            f.blocking for check in self.checks for f in check.findings
        )

    @property
    def incomplete(self) -> bool:
        """The run stopped (a crash) before its last utterances' grades were recorded."""
        return self.regrade is not None and self.regrade.incomplete > 0

    @property
    def origin_proven(self) -> bool:
        return self.origin is not None and self.origin.proven

    @property
    def verdict(self) -> Verdict | None:
        """The re-derived verdict; never the one the file states."""
        return self.derived.verdict if self.derived else None

    def check(self, check: Check) -> CheckResult:
        return next(result for result in self.checks if result.check is check)

    def problems(self) -> list[str]:
        """The first blocking finding of each failed check, as 'check: reason'."""
        return [
            f"{result.check}: {next(f.reason for f in result.findings if f.blocking)}"
            for result in self.checks
            if result.status is Status.FAILED
        ]

    def summary(self, name: str) -> str:
        """The one line a person reads first: consistency, origin, then the derived verdict."""
        if self.rejected:
            return f"{name}: REJECTED ({'; '.join(self.problems())})"
        tail = ""
        if self.contract_source == "embedded":
            tail = ", contract unknown to this lab (verdict derived with the embedded one)"
        if not self.consistent:
            problems = "; ".join(self.problems())
            return (
                f"{name}: INCONSISTENT ({problems}), {self.origin}, "
                f"re-derived verdict {self.verdict}{tail}"
            )
        if self.incomplete:
            tail += (
                ", incomplete: the run stopped before its last grade was recorded"
                " (not a change; reopening the run or reconcileruns records it)"
            )
        if self.origin_proven:
            return f"{name}: consistent, {self.origin}, verdict {self.verdict}{tail}"
        return (
            f"{name}: consistent, origin unproven ({self.origin}): its events give "
            f"{self.verdict}, but nothing shows that this lab or a key you trust wrote them{tail}"
        )


def short(digest: str) -> str:
    return f"{digest[:_SHOWN]}…"


def capped(findings: list[Finding]) -> tuple[Finding, ...]:
    if len(findings) <= MAX_LISTED_FINDINGS:
        return tuple(findings)
    more = len(findings) - MAX_LISTED_FINDINGS
    return (*findings[:MAX_LISTED_FINDINGS], Finding("more", f"and {more:,} more like these"))
