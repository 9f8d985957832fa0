"""The rollup's arithmetic: grouped counts in; totals, per-agent counts and daily trend out (pure).

The per-day counters group the turns by (day, agent, verdict, grounding verdict, flagged);
everything else is folded from those few rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta

from lab.api.schemas import AgentCounts, Counts, TrendDay
from lab.grading.grounding import GroundingVerdict
from lab.grading.schema import Verdict

MAX_DAYS = 90
DEFAULT_DAYS = 30


@dataclass(frozen=True)
class CountRow:
    """How many turns of one agent, on one day, got this verdict, grounding verdict and flag."""

    day: date
    agent: str
    verdict: Verdict
    grounding: GroundingVerdict
    turns: int
    # As stored on the rows (lab.audit.schema.is_flagged when they were written).
    flagged: bool


@dataclass
class _Tally:
    turns: int = 0
    flagged: int = 0
    verdicts: Counter[Verdict] = field(default_factory=Counter)
    grounding: Counter[GroundingVerdict] = field(default_factory=Counter)

    def add(self, row: CountRow) -> None:
        self.turns += row.turns
        self.flagged += row.turns if row.flagged else 0
        self.verdicts[row.verdict] += row.turns
        self.grounding[row.grounding] += row.turns

    def counts(self) -> Counts:
        return Counts(
            turns=self.turns,
            flagged=self.flagged,
            verdicts={v: self.verdicts[v] for v in Verdict},
            grounding={g: self.grounding[g] for g in GroundingVerdict},
        )


@dataclass(frozen=True)
class Folded:
    totals: Counts
    agents: list[AgentCounts]
    trend: list[TrendDay]


def day_window(today: date, days: int) -> list[date]:
    """The `days` UTC days ending with today, oldest first."""
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"days must be between 1 and {MAX_DAYS}, got {days}")
    return [today - timedelta(days=back) for back in range(days - 1, -1, -1)]


def fold(rows: Iterable[CountRow], window: list[date]) -> Folded:
    """Totals, each agent (most flagged first), and every day of the window (zeros included)."""
    total = _Tally()
    agents: dict[str, _Tally] = {}
    days = {day: _Tally() for day in window}
    for row in rows:
        if row.day not in days:
            raise ValueError(f"a count for {row.day}, outside the window {window[0]}..{window[-1]}")
        total.add(row)
        agents.setdefault(row.agent, _Tally()).add(row)
        days[row.day].add(row)
    by_agent = [
        AgentCounts.model_validate({"agent": agent, **tally.counts().model_dump()})
        for agent, tally in sorted(agents.items(), key=lambda item: (-item[1].flagged, item[0]))
    ]
    trend = [
        TrendDay(
            day=day,
            turns=tally.turns,
            flagged=tally.flagged,
            no_marker=tally.grounding[GroundingVerdict.NO_MARKER],
            orphan_marker=tally.grounding[GroundingVerdict.ORPHAN_MARKER],
        )
        for day, tally in days.items()
    ]
    return Folded(totals=total.counts(), agents=by_agent, trend=trend)
