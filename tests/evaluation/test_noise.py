"""The statistics of repeat trials: Wilson intervals, pass^k, flip rates, noise comparisons."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.evaluation.noise import (
    Difference,
    Interval,
    Outcome,
    ScenarioNoise,
    compare,
    flip_rate,
    outcome_of,
    pass_hat_k,
    summary_flips,
    wilson,
)
from lab.evaluation.verdicts import Verdict

# The machine is shared: a stall is not a slow test, so no per-example deadline.
counts = st.integers(min_value=0, max_value=500).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)
outcomes = st.lists(st.sampled_from(list(Outcome)), min_size=0, max_size=40).map(tuple)


@settings(deadline=None)
@given(counts)
def test_the_wilson_interval_holds_the_observed_rate_inside_zero_and_one(
    count: tuple[int, int],
) -> None:
    successes, trials = count
    interval = wilson(successes, trials)
    assert 0.0 <= interval.low <= interval.high <= 1.0
    if trials:
        assert interval.low <= successes / trials <= interval.high


@settings(deadline=None)
@given(counts)
def test_the_wilson_interval_is_symmetric_in_passes_and_failures(count: tuple[int, int]) -> None:
    successes, trials = count
    interval, mirrored = wilson(successes, trials), wilson(trials - successes, trials)
    assert interval.low == pytest.approx(1 - mirrored.high, abs=1e-12)
    assert interval.high == pytest.approx(1 - mirrored.low, abs=1e-12)


@settings(deadline=None)
@given(st.integers(min_value=1, max_value=200))
def test_more_trials_narrow_an_unchanged_rate(trials: int) -> None:
    small, large = wilson(trials, 2 * trials), wilson(2 * trials, 4 * trials)
    assert large.high - large.low < small.high - small.low


def test_known_wilson_intervals() -> None:
    assert wilson(0, 10).low == 0.0
    assert wilson(0, 10).high == pytest.approx(0.2775, abs=1e-4)
    assert wilson(10, 10).low == pytest.approx(0.7225, abs=1e-4)
    assert wilson(5, 10).low == pytest.approx(0.2366, abs=1e-4)
    assert wilson(5, 10).high == pytest.approx(0.7634, abs=1e-4)
    assert wilson(0, 0) == Interval(0.0, 1.0)


def test_an_impossible_count_is_refused() -> None:
    with pytest.raises(ValueError):
        wilson(3, 2)
    with pytest.raises(ValueError):
        pass_hat_k(1, 3, 4)


@settings(deadline=None)
@given(counts, st.integers(min_value=1, max_value=20))
def test_pass_hat_k_is_a_probability_falling_with_k(count: tuple[int, int], k: int) -> None:
    successes, trials = count
    if k >= trials:
        return
    value = pass_hat_k(successes, trials, k)
    assert 0.0 <= value <= 1.0
    assert pass_hat_k(successes, trials, k + 1) <= value
    assert pass_hat_k(successes, trials, 1) == pytest.approx(successes / trials)


def test_pass_hat_k_of_all_k_is_all_or_nothing() -> None:
    assert pass_hat_k(10, 10, 10) == 1.0
    assert pass_hat_k(9, 10, 10) == 0.0
    assert pass_hat_k(8, 10, 2) == pytest.approx(28 / 45)


@settings(deadline=None)
@given(st.lists(st.booleans(), max_size=60))
def test_the_flip_rate_is_the_share_of_disagreeing_pairs(passed: list[bool]) -> None:
    n = len(passed)
    pairs = [(a, b) for i, a in enumerate(passed) for b in passed[i + 1 :]]
    expected = sum(a != b for a, b in pairs) / len(pairs) if pairs else 0.0
    assert flip_rate(passed) == pytest.approx(expected)
    assert flip_rate(passed) == 0.0 or 0 < sum(passed) < n


@settings(deadline=None)
@given(outcomes)
def test_caller_faults_judge_no_agent(found: tuple[Outcome, ...]) -> None:
    noise = ScenarioNoise(found)
    assert noise.caller_faults + len(noise.judged) == noise.trials
    without = ScenarioNoise(tuple(o for o in found if o is not Outcome.CALLER))
    assert (noise.passed, noise.interval, noise.flip_rate) == (
        without.passed,
        without.interval,
        without.flip_rate,
    )
    assert noise.pass_k == (bool(found) and set(found) == {Outcome.PASS})


def test_a_row_says_its_rate_interval_and_flips() -> None:
    row = ScenarioNoise((Outcome.PASS,) * 7 + (Outcome.FAIL,) * 2 + (Outcome.CALLER,))
    assert row.label() == (
        "pass^10=no pass_rate=7/9 (78%, 95% CI [45%, 94%]) flip_rate=0.39 caller_faults=1"
    )
    assert summary_flips([row, ScenarioNoise((Outcome.PASS,) * 3)]) == 1


@settings(deadline=None)
@given(outcomes, outcomes)
def test_a_comparison_is_beyond_noise_only_where_intervals_part(
    first: tuple[Outcome, ...], second: tuple[Outcome, ...]
) -> None:
    a, b = ScenarioNoise(first), ScenarioNoise(second)
    found = compare(a, b)
    overlap = a.interval.overlaps(b.interval)
    assert (found.kind is Difference.WITHIN_NOISE) == overlap
    assert (
        compare(b, a).kind
        is {
            Difference.WITHIN_NOISE: Difference.WITHIN_NOISE,
            Difference.FIRST_BETTER: Difference.SECOND_BETTER,
            Difference.SECOND_BETTER: Difference.FIRST_BETTER,
        }[found.kind]
    )
    if found.kind is Difference.FIRST_BETTER:
        assert a.rate is not None and b.rate is not None and a.rate > b.rate
    assert ("within noise" in found.reason) == overlap


def test_an_agent_with_a_habit_is_beyond_noise_and_an_a_a_pair_is_not() -> None:
    good = ScenarioNoise((Outcome.PASS,) * 10)
    habit = ScenarioNoise((Outcome.FAIL,) * 10)
    assert compare(good, habit).kind is Difference.FIRST_BETTER
    shaky = ScenarioNoise((Outcome.PASS,) * 7 + (Outcome.FAIL,) * 3)
    assert compare(good, shaky).kind is Difference.WITHIN_NOISE
    assert math.isclose(shaky.flip_rate, 21 / 45)


def test_a_trial_is_the_caller_s_fault_only_where_it_answered_from_a_default_persona() -> None:
    answered = ["caller.utterance", "caller.persona_answered"]
    assert outcome_of(Verdict.INCONCLUSIVE, answered, persona_given=False) is Outcome.CALLER
    assert outcome_of(Verdict.INCONCLUSIVE, answered, persona_given=True) is Outcome.INCONCLUSIVE
    # A contradiction is the agent's, whatever the caller answered before it.
    assert outcome_of(Verdict.FAIL, answered, persona_given=False) is Outcome.FAIL
    assert outcome_of(Verdict.PASS, answered, persona_given=False) is Outcome.PASS
    # A missed cue is the agent's: it never gave what the line waits for.
    assert outcome_of(Verdict.FAIL, ["caller.cue_missed"], persona_given=False) is Outcome.FAIL
    assert outcome_of(Verdict.INCONCLUSIVE, [], persona_given=False) is Outcome.INCONCLUSIVE
