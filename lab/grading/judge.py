"""One claim's finding, built from what was said, its category and what it was checked against."""

from __future__ import annotations

from dataclasses import dataclass

from lab.grading.schema import Category, ClaimFinding, Verdict


@dataclass(frozen=True)
class Judge:
    claim: str
    category: Category
    refs: tuple[str, ...] = ()

    def __call__(
        self,
        verdict: Verdict,
        rationale: str,
        confidence: float,
        refs: tuple[str, ...] | None = None,
    ) -> ClaimFinding:
        return ClaimFinding(
            claim=self.claim,
            category=self.category,
            verdict=verdict,
            constraint_ref=self.refs if refs is None else refs,
            rationale=rationale,
            confidence=confidence,
        )
