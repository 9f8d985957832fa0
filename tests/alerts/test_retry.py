from __future__ import annotations

import pytest

from lab.alerts.retry import RetryPolicy

POLICY = RetryPolicy(base_s=2.0, cap_s=60.0, max_attempts=5)


def test_the_delay_doubles_with_each_failure_until_the_cap():
    ceilings = [POLICY.delay_s(attempts, jitter=0.999999) for attempts in range(1, 8)]
    assert ceilings == pytest.approx([2, 4, 8, 16, 32, 60, 60], rel=1e-5)


def test_jitter_keeps_at_least_half_the_delay():
    assert POLICY.delay_s(3, jitter=0.0) == 4.0
    assert 4.0 < POLICY.delay_s(3, jitter=0.5) < 8.0


def test_a_message_dies_after_the_last_attempt():
    assert not POLICY.gives_up(4)
    assert POLICY.gives_up(5)


@pytest.mark.parametrize(
    "arguments", [{"base_s": 0.0, "cap_s": 1.0}, {"base_s": 5.0, "cap_s": 1.0}]
)
def test_a_policy_that_cannot_back_off_is_refused(arguments):
    with pytest.raises(ValueError, match="backoff"):
        RetryPolicy(max_attempts=3, **arguments)


def test_jitter_outside_its_range_is_refused():
    with pytest.raises(ValueError, match="jitter"):
        POLICY.delay_s(1, jitter=1.0)
