"""Agents side by side: one column per trial group, one row per scenario, each cell its noise.

Built from the trial tables (lab.runs.trials), so every cell is its runs' stored logs
re-evaluated, and a viewer sees only the groups whose runs they may see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from uuid import UUID

from lab.evaluation.noise import ScenarioNoise
from lab.evaluation.verdicts import AssertionResult
from lab.events.chain import digest
from lab.events.models import Run, TrialGroup
from lab.runs.trials import ScenarioTrials, TrialTable, trial_table

# A page shows this many agents at most: beyond it, columns are too narrow to read.
MAX_COLUMNS = 6


@dataclass(frozen=True)
class ComparisonFilter:
    """What the page shows: a channel and a mode (empty: any), and chosen groups (none: newest)."""

    channel: str = ""
    mode: str = ""
    groups: tuple[UUID, ...] = ()

    def keeps(self, table: TrialTable) -> bool:
        return (not self.channel or table.channel == self.channel) and (
            not self.mode or table.mode == self.mode
        )


@dataclass(frozen=True)
class Column:
    """One agent's trial group, headed by who the agent is."""

    table: TrialTable
    connector: str
    model: str
    tools_digest: str

    @property
    def group(self) -> TrialGroup:
        return self.table.group


@dataclass(frozen=True)
class Cell:
    row: ScenarioTrials

    @property
    def noise(self) -> ScenarioNoise:
        return self.row.noise

    @property
    def first_failing(self) -> tuple[Run | None, AssertionResult | None]:
        """The first trial that did not pass: its run and its first failing assertion."""
        for cell in self.row.cells:
            if not cell.passed:
                return cell.run, cell.failing
        return None, None


@dataclass(frozen=True)
class ComparisonRow:
    scenario_id: str
    cells: list[Cell | None]


@dataclass(frozen=True)
class Comparison:
    columns: list[Column]
    rows: list[ComparisonRow]


def comparison_build(
    group_ids: Iterable[UUID], runs_of: Callable[[UUID], list[Run]], keep: ComparisonFilter
) -> Comparison:
    """The groups' tables side by side, as far as the filter keeps them."""
    tables = [trial_table(runs_of(group_id)) for group_id in group_ids]
    kept = [table for table in tables if table is not None and keep.keeps(table)][:MAX_COLUMNS]
    columns = [_column(table) for table in kept]
    scenarios = sorted({row.scenario_id for table in kept for row in table.rows})
    by_table = [{row.scenario_id: row for row in table.rows} for table in kept]
    rows = [
        ComparisonRow(
            scenario_id=scenario,
            cells=[Cell(found[scenario]) if scenario in found else None for found in by_table],
        )
        for scenario in scenarios
    ]
    return Comparison(columns=columns, rows=rows)


def newest_groups(group_ids: Iterable[UUID | None], *, limit: int = MAX_COLUMNS) -> list[UUID]:
    """The distinct groups of runs listed newest first, in that order."""
    seen: dict[UUID, None] = {}
    for group_id in group_ids:
        if group_id is not None:
            seen.setdefault(group_id, None)
        if len(seen) == limit:
            break
    return list(seen)


def _column(table: TrialTable) -> Column:
    first = next(cell.run for row in table.rows for cell in row.cells if cell.run is not None)
    tools = digest(first.agent_tools)[:12] if first.agent_tools else ""
    return Column(
        table=table,
        connector=first.agent_connector or "scripted",
        model=first.agent_model,
        tools_digest=tools,
    )
