"""Echo: the agent's own audio coming back through the mic, told apart from a caller."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from lab.audio.echo import HOP_MS, MAX_LAG_MS, echo_match, envelope, has_caller, lagged
from tests.audio.speechlike import delayed, pcm, speechlike

AGENT = speechlike(4.0, seed=1)
LAG_HOPS = MAX_LAG_MS // HOP_MS


def window(mic: np.ndarray, start_ms: int, ms: int = 500):
    """The mic's envelope over [start, start+ms) and the agent's over the same span + the lags."""
    mic_env = envelope(pcm(mic))[start_ms // HOP_MS : (start_ms + ms) // HOP_MS]
    padded = np.concatenate([np.zeros(MAX_LAG_MS * 16), AGENT])
    ref_env = envelope(pcm(padded))
    first = start_ms // HOP_MS
    return mic_env, lagged(ref_env[first : first + len(mic_env) + LAG_HOPS], len(mic_env))


@pytest.mark.parametrize("delay_ms", [50, 123, 247])
@pytest.mark.parametrize("gain", [0.5, 0.1])
def test_the_agents_voice_delayed_and_attenuated_is_echo(delay_ms: int, gain: float) -> None:
    rng = np.random.default_rng(delay_ms)
    mic = delayed(AGENT, delay_ms, gain, len(AGENT)) + rng.standard_normal(len(AGENT)) * 20
    for start_ms in (600, 1500, 2800):
        match = echo_match(*window(mic, start_ms))
        assert match.is_echo and not has_caller(*window(mic, start_ms), match.lag_ms), match
        assert abs(match.lag_ms - delay_ms) <= 20


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_a_caller_over_the_echo_or_alone_is_not_echo(seed: int) -> None:
    caller = speechlike(4.0, seed=seed)
    echo = delayed(AGENT, 120, 0.25, len(AGENT))
    starts = range(500, 3300, 100)
    for start_ms in (600, 1500, 2800):
        assert not echo_match(*window(caller + echo, start_ms)).is_echo
        assert not echo_match(*window(caller, start_ms)).is_echo
    # The voice path checks every 100 ms and takes two windows in a row as the caller's.
    found = [has_caller(*window(caller + echo, start_ms), 120) for start_ms in starts]
    assert sum(a and b for a, b in pairwise(found)) >= len(found) // 3
    alone = [has_caller(*window(echo, start_ms), 120) for start_ms in starts]
    assert not any(a and b for a, b in pairwise(alone))


def test_silence_or_too_little_audio_matches_nothing() -> None:
    quiet = np.zeros(len(AGENT))
    assert echo_match(*window(quiet, 1000)).score == 0.0
    mic_env, ref_env = window(AGENT, 1000, ms=20)
    assert not echo_match(mic_env, ref_env).is_echo
