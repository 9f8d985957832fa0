"""Repeat trials with their noise: pass rates with Wilson intervals, pass^k, verdict flips.

Pure: no Django, no I/O, no clock. A trial the scripted caller spoiled (it answered what its
scenario gave it no answer for) is counted apart and judges no agent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from lab.evaluation.verdicts import Verdict

# The two-sided 95% normal quantile.
Z95 = 1.959963984540054


class Outcome(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    CALLER = "caller"  # the caller's own failure, not the agent's


def outcome_of(verdict: Verdict, event_types: Iterable[str], *, persona_given: bool) -> Outcome:
    """A trial's outcome. One left inconclusive after the caller answered the agent from a
    default persona (its scenario gave none) is the caller's failure, not the agent's; a FAIL
    stays the agent's whatever the caller said: it rests on a contradiction the agent made."""
    if verdict is Verdict.PASS:
        return Outcome.PASS
    if verdict is Verdict.FAIL:
        return Outcome.FAIL
    if not persona_given and "caller.persona_answered" in set(event_types):
        return Outcome.CALLER
    return Outcome.INCONCLUSIVE


@dataclass(frozen=True)
class Interval:
    low: float
    high: float

    def overlaps(self, other: Interval) -> bool:
        return self.low <= other.high and other.low <= self.high

    def label(self) -> str:
        return f"[{self.low:.0%}, {self.high:.0%}]"


def wilson(successes: int, trials: int, z: float = Z95) -> Interval:
    """The Wilson score interval of a binomial proportion; no trials know nothing: [0, 1]."""
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes out of {trials} trials")
    if trials == 0:
        return Interval(0.0, 1.0)
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    # The exact ends: rounding must not push 0/n or n/n off the boundary it sits on.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(low, high)


def pass_hat_k(successes: int, trials: int, k: int) -> float:
    """τ²-bench's unbiased pass^k: the chance that k trials drawn from these all pass."""
    if not 1 <= k <= trials or not 0 <= successes <= trials:
        raise ValueError(f"pass^{k} of {successes}/{trials}")
    return math.comb(successes, k) / math.comb(trials, k)


def flip_rate(passed: Sequence[bool]) -> float:
    """The share of pairs of trials whose verdicts differ (0 when fewer than two trials)."""
    n = len(passed)
    if n < 2:
        return 0.0
    good = sum(passed)
    return good * (n - good) / math.comb(n, 2)


@dataclass(frozen=True)
class ScenarioNoise:
    """One scenario's K trials of one agent, the caller's failures set apart."""

    outcomes: tuple[Outcome, ...]

    @property
    def trials(self) -> int:
        return len(self.outcomes)

    @property
    def caller_faults(self) -> int:
        return self.outcomes.count(Outcome.CALLER)

    @property
    def judged(self) -> tuple[bool, ...]:
        """Each trial that judged the agent: whether it passed."""
        return tuple(o is Outcome.PASS for o in self.outcomes if o is not Outcome.CALLER)

    @property
    def passed(self) -> int:
        return sum(self.judged)

    @property
    def rate(self) -> float | None:
        return self.passed / len(self.judged) if self.judged else None

    @property
    def interval(self) -> Interval:
        return wilson(self.passed, len(self.judged))

    @property
    def pass_k(self) -> bool:
        """Every trial passed (a caller's failure included: pass^k asks for all k)."""
        return bool(self.outcomes) and all(o is Outcome.PASS for o in self.outcomes)

    @property
    def flip_rate(self) -> float:
        return flip_rate(self.judged)

    def label(self) -> str:
        judged = len(self.judged)
        rate = "n/a" if self.rate is None else f"{self.rate:.0%}"
        caller = f" caller_faults={self.caller_faults}" if self.caller_faults else ""
        return (
            f"pass^{self.trials}={'yes' if self.pass_k else 'no'} "
            f"pass_rate={self.passed}/{judged} ({rate}, 95% CI {self.interval.label()}) "
            f"flip_rate={self.flip_rate:.2f}{caller}"
        )


class Difference(StrEnum):
    WITHIN_NOISE = "within_noise"
    FIRST_BETTER = "first_better"
    SECOND_BETTER = "second_better"


@dataclass(frozen=True)
class Comparison:
    kind: Difference
    reason: str


def compare(first: ScenarioNoise, second: ScenarioNoise) -> Comparison:
    """Two agents on one scenario: beyond noise only where their intervals do not overlap."""
    a, b = first.interval, second.interval
    if a.overlaps(b):
        return Comparison(
            Difference.WITHIN_NOISE,
            f"within noise: the intervals {a.label()} and {b.label()} overlap",
        )
    kind = Difference.FIRST_BETTER if a.low > b.high else Difference.SECOND_BETTER
    return Comparison(
        kind, f"beyond noise: the intervals {a.label()} and {b.label()} do not overlap"
    )


def summary_flips(rows: Sequence[ScenarioNoise]) -> int:
    """How many scenarios flipped their verdict at least once across their trials."""
    return sum(row.flip_rate > 0 for row in rows)
