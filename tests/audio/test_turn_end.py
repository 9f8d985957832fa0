from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.audio.turn_end import TurnEndConfig, TurnEvidence, decide

CONFIG = TurnEndConfig()
signals = st.sampled_from(["complete", "incomplete", "unknown"])
probabilities = st.none() | st.floats(min_value=0.0, max_value=1.0)
silences = st.integers(min_value=0, max_value=5000)


@given(silences, probabilities, signals)
def test_never_waits_past_the_fallback(silence, p, signal):
    verdict = decide(TurnEvidence(silence, p, signal), CONFIG)
    if silence >= CONFIG.fallback_ms:
        assert verdict.complete


@given(silences, probabilities, signals)
def test_never_ends_a_turn_before_the_candidate_silence(silence, p, signal):
    if silence < CONFIG.candidate_ms:
        assert not decide(TurnEvidence(silence, p, signal), CONFIG).complete


@given(st.integers(min_value=0, max_value=CONFIG.fallback_ms - 1), probabilities)
def test_trailing_words_end_a_turn_early_only_for_a_confident_model(silence, p):
    verdict = decide(TurnEvidence(silence, p, "incomplete"), CONFIG)
    if verdict.complete:
        assert p is not None and p >= CONFIG.confident_at


@given(silences, silences, probabilities, signals)
def test_more_silence_never_undoes_a_complete_verdict(a, b, p, signal):
    shorter, longer = sorted((a, b))
    if decide(TurnEvidence(shorter, p, signal), CONFIG).complete:
        assert decide(TurnEvidence(longer, p, signal), CONFIG).complete


@given(st.integers(min_value=CONFIG.candidate_ms, max_value=CONFIG.fallback_ms - 1))
def test_a_finished_request_ends_at_the_candidate_unless_the_model_objects(silence):
    assert decide(TurnEvidence(silence, 0.3, "complete"), CONFIG).complete
    assert decide(TurnEvidence(silence, None, "complete"), CONFIG).complete
    assert not decide(TurnEvidence(silence, 0.05, "complete"), CONFIG).complete


@given(st.integers(min_value=CONFIG.candidate_ms, max_value=CONFIG.fallback_ms - 1))
def test_without_words_the_model_decides_and_without_a_model_silence_does(silence):
    assert decide(TurnEvidence(silence, 0.7, "unknown"), CONFIG).complete
    assert not decide(TurnEvidence(silence, 0.3, "unknown"), CONFIG).complete
    assert not decide(TurnEvidence(silence, None, "unknown"), CONFIG).complete


def test_every_verdict_says_why():
    verdict = decide(TurnEvidence(240, 0.99, "incomplete"), CONFIG)
    assert verdict.complete and "0.99" in verdict.reason


@pytest.mark.parametrize(
    "kwargs",
    [{"candidate_ms": 600}, {"candidate_ms": 0}, {"supported_at": 0.8}, {"confident_at": 1.5}],
)
def test_bad_configuration_is_refused(kwargs):
    with pytest.raises(ValueError):
        TurnEndConfig(**kwargs)
