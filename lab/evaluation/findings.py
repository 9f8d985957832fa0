"""One assertion's finding, and the tally that turns per-item outcomes into it. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from lab.evaluation.records import Located
from lab.evaluation.verdicts import AssertionState


@dataclass(frozen=True, slots=True)
class Finding:
    state: AssertionState
    supporting: list[str]
    contradicting: list[str]
    reason: str


def lacking(reason: str) -> Finding:
    return Finding(AssertionState.NO_EVIDENCE, [], [], reason)


class Tally:
    """Per-item outcomes of one assertion: any contradiction outweighs any gap."""

    def __init__(self) -> None:
        self.supporting: list[str] = []
        self.contradicting: list[str] = []
        self.contradictions: list[str] = []
        self.gaps: list[str] = []

    def support(self, *records: Located | None) -> None:
        for record in records:
            if record is not None:
                self.supporting.append(record.id)

    def contradict(self, reason: str, *records: Located | None) -> None:
        self.contradictions.append(reason)
        for record in records:
            if record is not None:
                self.contradicting.append(record.id)

    def lack(self, reason: str) -> None:
        self.gaps.append(reason)

    def finding(self, supported: str) -> Finding:
        if self.contradictions:
            state, reason = AssertionState.CONTRADICTED, first_of(self.contradictions)
        elif self.gaps:
            state, reason = AssertionState.NO_EVIDENCE, first_of(self.gaps)
        else:
            state, reason = AssertionState.SUPPORTED, supported
        return Finding(state, self.supporting, self.contradicting, reason)


def first_of(reasons: list[str]) -> str:
    more = len(reasons) - 1
    return reasons[0] if not more else f"{reasons[0]} (and {more} more like it)"
