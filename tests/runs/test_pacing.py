"""The audio pacer refuses a client faster than real time, never one the server kept waiting."""

from __future__ import annotations

from lab.audio.frames import FRAME_MS
from lab.runs.pacing import BANK_S, MAX_AHEAD_S, AudioPacer

FRAME_S = FRAME_MS / 1000


def frames(pacer: AudioPacer, count: int, *, start: float, spacing: float) -> list[bool]:
    """Whether each of count frames, read spacing seconds apart from start, was too fast."""
    return [pacer.too_fast(start + i * spacing) for i in range(count)]


def test_a_client_sending_in_real_time_is_never_refused() -> None:
    pacer = AudioPacer()
    assert not any(frames(pacer, 3000, start=0.0, spacing=FRAME_S))


def test_a_burst_of_audio_at_the_start_of_a_call_beyond_the_allowance_is_refused() -> None:
    pacer = AudioPacer()
    verdicts = frames(pacer, 200, start=0.0, spacing=0.0)
    assert any(verdicts)
    assert abs(verdicts.index(True) - MAX_AHEAD_S / FRAME_S) <= 1


def test_a_client_at_twice_real_time_is_refused_within_seconds() -> None:
    pacer = AudioPacer()
    verdicts = frames(pacer, 1000, start=0.0, spacing=FRAME_S / 2)
    assert True in verdicts
    assert verdicts.index(True) * FRAME_S / 2 < 2 * MAX_AHEAD_S


def test_the_backlog_a_server_stall_leaves_is_not_blamed_on_the_client() -> None:
    pacer = AudioPacer()
    assert not any(frames(pacer, 50, start=0.0, spacing=FRAME_S))
    # The server stalls for 8 s; the 8 s of audio the client sent meanwhile is read at once.
    stall_end = 50 * FRAME_S + 8.0
    assert not any(frames(pacer, 400, start=stall_end, spacing=0.0))
    assert not any(frames(pacer, 100, start=stall_end, spacing=FRAME_S))


def test_a_quiet_client_cannot_bank_credit_beyond_the_bank() -> None:
    pacer = AudioPacer()
    pacer.too_fast(0.0)
    # A minute of silence buys at most BANK_S of burst, plus the usual allowance.
    verdicts = frames(pacer, 1000, start=60.0, spacing=0.0)
    assert abs(verdicts.index(True) - (BANK_S + MAX_AHEAD_S) / FRAME_S) <= 1
