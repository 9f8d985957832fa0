"""What `runscenarios --trials K` prints: each scenario's noise, and two agents set side by side."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.management.base import OutputWrapper

from lab.evaluation.noise import Difference, ScenarioNoise, compare, summary_flips


@dataclass(frozen=True)
class AgentTrials:
    """One agent's K trials of each scenario, in scenario order."""

    label: str
    rows: list[tuple[str, ScenarioNoise]]

    @property
    def trials(self) -> int:
        return max((noise.trials for _, noise in self.rows), default=0)

    def summary(self) -> str:
        noises = [noise for _, noise in self.rows]
        judged = sum(len(noise.judged) for noise in noises)
        caller = sum(noise.caller_faults for noise in noises)
        return (
            f"pass^{self.trials}: {sum(noise.pass_k for noise in noises)}/{len(noises)} "
            f"scenarios; {sum(noise.passed for noise in noises)}/{judged} trials passed; "
            f"verdicts flipped on {summary_flips(noises)}/{len(noises)} scenarios; "
            f"caller faults {caller}; agent {self.label}"
        )


def print_comparison(
    out: OutputWrapper, first: AgentTrials, second: AgentTrials, *, baseline: bool
) -> int:
    """Per scenario, whether the agents differ beyond noise; returns how many do."""
    what = "baseline (A/A): the same agent twice" if baseline else "A against B"
    out.write(f"{what}: A = {first.label}; B = {second.label}")
    theirs = dict(second.rows)
    beyond = 0
    for scenario, mine in first.rows:
        other = theirs.get(scenario)
        if other is None:
            continue
        found = compare(mine, other)
        who = {
            Difference.WITHIN_NOISE: "",
            Difference.FIRST_BETTER: " (A better)",
            Difference.SECOND_BETTER: " (B better)",
        }[found.kind]
        beyond += found.kind is not Difference.WITHIN_NOISE
        out.write(
            f"{scenario} A={_rate(mine)} B={_rate(other)} {found.kind.value}{who}: {found.reason}"
        )
    out.write(f"beyond noise on {beyond}/{len(first.rows)} scenarios")
    return beyond


def _rate(noise: ScenarioNoise) -> str:
    return f"{noise.passed}/{len(noise.judged)}"
