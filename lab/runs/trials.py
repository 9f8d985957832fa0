"""Repeat trials side by side: per scenario, one cell per trial, pass^k and the pass rate.

A viewer sees a group through its runs, by the runs' own rules: the runs it owns
(lab.runs.ownership) or, for a tenant's members, the tenant's audited runs (as the tenant's
run snapshots are reached). Each cell is the run's stored log re-evaluated, never a stored verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from django.db.models import Count, Q

from lab.evaluation.evaluator import evaluate
from lab.evaluation.noise import Outcome, ScenarioNoise, outcome_of, summary_flips
from lab.evaluation.verdicts import AssertionResult, AssertionState, Evaluation, Verdict
from lab.events import store
from lab.events.models import Run, TrialGroup
from lab.events.types import Channel, Mode, RunEnded
from lab.runs.ownership import owner_user_set, runs_owned
from lab.runs.services import run_start
from lab.runs.trial_players import ABANDONED, trial_player_renew
from lab.scenarios.catalog import UnknownScenario, contract_get


def trial_group_create(*, trials: int) -> TrialGroup:
    return TrialGroup.objects.create(trials=trials)


def trial_runs_create(
    *,
    scenario_id: str,
    trials: int,
    mode: Mode,
    ungrounded: bool,
    owner_token: str,
    user_id: int | None,
) -> list[Run]:
    """A group of K typed runs of the lab's own agent, all owned like a run the picker starts,
    made before any plays so the trials page shows every trial from the start. The group's
    player lease starts now: a server that dies before it plays leaves them abandoned."""
    group = trial_group_create(trials=trials)
    trial_player_renew(group.id)
    runs = []
    for index in range(1, trials + 1):
        run = run_start(
            scenario_id=scenario_id,
            mode=mode,
            channel=Channel.TYPED,
            owner_token=owner_token,
            ungrounded=ungrounded,
            trial=(group, index),
        )
        if user_id is not None:
            owner_user_set(run=run, user_id=user_id)
        runs.append(run)
    return runs


@dataclass(frozen=True)
class TrialCell:
    """One trial of one scenario; run is None when no run the viewer may see fills it."""

    index: int
    run: Run | None = None
    evaluation: Evaluation | None = None
    # The first assertion that failed (contradicted, else left without evidence) and the
    # events that contradict it, as (id, type), in the evaluator's order.
    failing: AssertionResult | None = None
    events: tuple[tuple[str, str], ...] = ()
    problem: str = ""
    # A trial with no run to show counts as failed.
    outcome: Outcome = Outcome.FAIL
    # Its run was ended because the server playing the group stopped (trial_players.py).
    abandoned: bool = False

    @property
    def passed(self) -> bool:
        return self.evaluation is not None and self.evaluation.verdict is Verdict.PASS

    @property
    def pending(self) -> bool:
        """Its run has not ended yet: still playing, or waiting its turn (or never played)."""
        return self.run is not None and self.run.status != Run.Status.ENDED


@dataclass(frozen=True)
class ScenarioTrials:
    scenario_id: str
    cells: list[TrialCell]

    @property
    def passed(self) -> int:
        return sum(cell.passed for cell in self.cells)

    @property
    def pass_k(self) -> bool:
        """All K trials passed; a trial with no run to show counts as not passed."""
        return self.passed == len(self.cells)

    @property
    def noise(self) -> ScenarioNoise:
        """The row's statistics; a trial with no run to show counts as failed."""
        return ScenarioNoise(tuple(cell.outcome for cell in self.cells))


@dataclass(frozen=True)
class TrialTable:
    group: TrialGroup
    rows: list[ScenarioTrials]
    agent: str
    mode: str
    channel: str

    @property
    def pass_k_count(self) -> int:
        return sum(row.pass_k for row in self.rows)

    @property
    def flipped_count(self) -> int:
        return summary_flips([row.noise for row in self.rows])

    @property
    def finished_count(self) -> int:
        """Trials no longer pending (a trial with no run to show is as finished as it gets)."""
        return sum(not cell.pending for row in self.rows for cell in row.cells)

    @property
    def trial_count(self) -> int:
        return sum(len(row.cells) for row in self.rows)

    @property
    def abandoned_count(self) -> int:
        return sum(cell.abandoned for row in self.rows for cell in row.cells)

    @property
    def abandoned_reason(self) -> str:
        return ABANDONED

    @property
    def done(self) -> bool:
        return self.finished_count == self.trial_count


def trial_runs_owned(group_id: UUID, owner_token: str | None, user_id: int | None) -> list[Run]:
    """The group's runs the session's owner token or signed-in user owns."""
    runs = runs_owned(owner_token, user_id).filter(trial_group_id=group_id)
    return list(runs.select_related("trial_group"))


def trial_runs_of_tenant(group_id: UUID, tenant: str) -> list[Run]:
    """The group's runs that were the tenant's and have its audit rows (as tenant_run asks)."""
    runs = Run.objects.filter(trial_group_id=group_id, tenant=tenant, audit_records__tenant=tenant)
    return list(runs.distinct().select_related("trial_group"))


@dataclass(frozen=True)
class TrialGroupSummary:
    group: TrialGroup
    scenarios: int
    runs: int


def trial_groups_of_tenant(tenant: str, *, limit: int = 50) -> list[TrialGroupSummary]:
    """The tenant's newest groups (those with runs it may see), without evaluating any run."""
    theirs = Q(runs__tenant=tenant, runs__audit_records__tenant=tenant)
    groups = (
        TrialGroup.objects.filter(theirs)
        .annotate(
            seen_runs=Count("runs", filter=theirs, distinct=True),
            seen_scenarios=Count("runs__scenario_id", filter=theirs, distinct=True),
        )
        .order_by("-created_at")[:limit]
    )
    return [
        TrialGroupSummary(group=group, scenarios=group.seen_scenarios, runs=group.seen_runs)
        for group in groups
    ]


def trial_table(runs: Iterable[Run]) -> TrialTable | None:
    """The side-by-side table of the runs' group; None when there are no runs (nothing to see)."""
    seen = sorted(runs, key=lambda run: (run.scenario_id, run.trial_index or 0))
    if not seen or seen[0].trial_group is None:
        return None
    group = seen[0].trial_group
    by_slot = {(run.scenario_id, run.trial_index): run for run in seen}
    rows = [
        ScenarioTrials(
            scenario_id=scenario_id,
            cells=[
                _cell(index, by_slot.get((scenario_id, index)))
                for index in range(1, group.trials + 1)
            ],
        )
        for scenario_id in sorted({run.scenario_id for run in seen})
    ]
    first = seen[0]
    return TrialTable(
        group=group, rows=rows, agent=_agent_label(first), mode=first.mode, channel=first.channel
    )


def _agent_label(run: Run) -> str:
    if not run.agent_connector:
        return "the lab's scripted agent (in process)"
    model = f"(model {run.agent_model})" if run.agent_model else ""
    return " ".join(part for part in (run.agent_connector, run.agent_endpoint, model) if part)


def _cell(index: int, run: Run | None) -> TrialCell:
    if run is None:
        return TrialCell(index=index, problem="no run of this trial to show")
    try:
        contract = contract_get(run.scenario_id)
    except UnknownScenario as error:
        return TrialCell(index=index, run=run, problem=str(error))
    events = store.run_events(run)
    evaluation = evaluate(contract, events)
    failing = _first_failing(evaluation)
    types = {event.id: event.type for event in events}
    against = failing.contradicting if failing else []
    last = events[-1].payload if events else None
    abandoned = isinstance(last, RunEnded) and last.reason == ABANDONED
    return TrialCell(
        index=index,
        run=run,
        evaluation=evaluation,
        failing=failing,
        events=tuple((event_id, types.get(event_id, "")) for event_id in against),
        problem=f"Abandoned: {ABANDONED}." if abandoned else "",
        outcome=outcome_of(
            evaluation.verdict, types.values(), persona_given=contract.persona is not None
        ),
        abandoned=abandoned,
    )


def _first_failing(evaluation: Evaluation) -> AssertionResult | None:
    if evaluation.verdict is Verdict.PASS:
        return None
    for state in (AssertionState.CONTRADICTED, AssertionState.NO_EVIDENCE):
        for result in evaluation.assertions:
            if result.state is state:
                return result
    return None
