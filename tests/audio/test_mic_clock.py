"""MicClock: capture times follow the audio, not a loop that stalls and then takes a burst."""

from __future__ import annotations

import pytest

from lab.audio.frames import FRAME_MS
from lab.audio.mic_clock import LATE_MS, PAUSE_FRAMES, MicClock

FRAME_S = FRAME_MS / 1000
# The mic's clock against the reading clock, and the path's least delay.
BASE_S = 100.0


def arrivals(
    captures: list[float], *, stalls: dict[int, float], take_s: float = 0.0
) -> list[float]:
    """When each frame is read: on capture, or at the end of a stall that began before it, then
    one every `take_s` until the backlog is gone (a loop catching up)."""
    out: list[float] = []
    for index, capture in enumerate(captures):
        at = capture
        if index in stalls:
            at = max(at, capture + stalls[index])
        if out:
            at = max(at, out[-1] + take_s)
        out.append(at)
    return out


def feed(clock: MicClock, captures: list[float], arrived: list[float]) -> list[float]:
    """Each frame's capture error (s) as judged right after it arrived."""
    errors = []
    for index, (capture, at) in enumerate(zip(captures, arrived, strict=True)):
        clock.arrived(index * FRAME_MS, at)
        errors.append(clock.captured(index * FRAME_MS) - capture)
    return errors


def steady(frames: int, *, start_s: float = BASE_S) -> list[float]:
    return [start_s + index * FRAME_S for index in range(frames)]


def test_frames_on_time_with_jitter_are_captured_at_their_position_plus_the_least_delay() -> None:
    captures = steady(200)
    jitter = [0.003 * (index * 7 % 11) for index in range(200)]
    clock = MicClock()
    feed(clock, captures, [c + j for c, j in zip(captures, jitter, strict=True)])
    for index, capture in enumerate(captures):
        assert clock.captured(index * FRAME_MS) == pytest.approx(capture, abs=1e-9)
    assert clock.settled


@pytest.mark.parametrize("stall_ms", [60, 100, 200, 400, 800, 1500])
@pytest.mark.parametrize("take_ms", [0, 2, 8, 12])
def test_a_burst_after_a_stall_shifts_no_capture_time(stall_ms: int, take_ms: int) -> None:
    captures = steady(300)
    arrived = arrivals(captures, stalls={100: stall_ms / 1000}, take_s=take_ms / 1000)
    assert arrived[100] - captures[100] == pytest.approx(stall_ms / 1000)
    clock = MicClock()
    errors = feed(clock, captures, arrived)
    # Judged as it came, and looked back on once the backlog is gone.
    assert max(abs(e) for e in errors) < 1e-9
    for index, capture in enumerate(captures):
        assert clock.captured(index * FRAME_MS) == pytest.approx(capture, abs=1e-9)
    assert len(clock.anchors) == 1 and clock.settled


@pytest.mark.parametrize("behind_ms", [5, 10, 30])
def test_a_loop_falling_behind_shifts_no_capture_time(behind_ms: int) -> None:
    # Each frame read `behind_ms` later than real time would, for two seconds, then a backlog.
    captures = steady(300)
    arrived = [c + min(index, 100) * behind_ms / 1000 for index, c in enumerate(captures)]
    caught_up = arrivals(captures[100:], stalls={0: arrived[100] - captures[100]}, take_s=0.002)
    arrived[100:] = caught_up
    clock = MicClock()
    errors = feed(clock, captures, arrived)
    assert max(abs(e) for e in errors) < 1e-9
    assert len(clock.anchors) == 1


def test_a_loop_that_fell_behind_and_keeps_pace_there_is_no_pause() -> None:
    # Read 30 ms later each frame for two seconds, then at real-time rate three seconds behind.
    captures = steady(400)
    arrived = [c + min(index, 100) * 0.03 for index, c in enumerate(captures)]
    clock = MicClock()
    errors = feed(clock, captures, arrived)
    assert max(abs(e) for e in errors) < 1e-9
    assert len(clock.anchors) == 1 and not clock.paused


@pytest.mark.parametrize("pause_ms", [100, 300, 600, 2000])
def test_a_client_that_pauses_is_followed_from_the_pause_on(pause_ms: int) -> None:
    # The mic is off for the pause: the next frame holds audio from after it, on the same stream.
    captures = steady(100) + steady(200, start_s=BASE_S + 100 * FRAME_S + pause_ms / 1000)
    clock = MicClock()
    errors = feed(clock, captures, captures)
    # Until the lateness has held for a run, the new frames cannot be told from a backlog...
    assert all(e < 0 for e in errors[100 : 100 + PAUSE_FRAMES - 1])
    # ...and from then on every frame since the pause is where it was captured.
    for index, capture in enumerate(captures):
        assert clock.captured(index * FRAME_MS) == pytest.approx(capture, abs=1e-9)
    assert [start for start, _ in clock.anchors] == [0, 100 * FRAME_MS]
    # The other reading of those frames, a backlog read as slowly as it was captured: the offset
    # from before the pause.
    assert clock.paused
    for index in range(100, 300):
        assert clock.captured(index * FRAME_MS, last_pause=False) == pytest.approx(
            captures[index] - pause_ms / 1000, abs=1e-9
        )


def test_a_pause_read_on_a_loaded_loop_is_followed_from_the_pause_on() -> None:
    captures = steady(100) + steady(100, start_s=BASE_S + 100 * FRAME_S + 0.4)
    # Now and then a frame is read up to 70 ms late, the loop busy elsewhere.
    arrived = [
        c + (0.01 * (index % 8) if index % 3 == 0 else 0.0) for index, c in enumerate(captures)
    ]
    clock = MicClock()
    feed(clock, captures, arrived)
    for index, capture in enumerate(captures):
        assert clock.captured(index * FRAME_MS) == pytest.approx(capture, abs=1e-9)


def test_a_late_run_is_unsettled_until_it_is_read_as_a_backlog_or_a_pause() -> None:
    clock = MicClock()
    for index in range(50):
        clock.arrived(index * FRAME_MS, BASE_S + index * FRAME_S)
    assert clock.settled
    for index in range(50, 50 + PAUSE_FRAMES - 1):
        clock.arrived(index * FRAME_MS, BASE_S + index * FRAME_S + 0.3)
        assert not clock.settled
    clock.arrived((50 + PAUSE_FRAMES - 1) * FRAME_MS, BASE_S + (49 + PAUSE_FRAMES) * FRAME_S + 0.3)
    assert clock.settled


def test_a_backlog_then_a_pause_keeps_the_backlog_on_the_old_offset() -> None:
    # A stall of 200 ms, three frames taken in a burst, then the client turns its mic off for
    # 150 ms more and streams on from its own clock's now.
    captures = [BASE_S + index * FRAME_S + (0.35 if index >= 103 else 0.0) for index in range(200)]
    arrived = list(captures)
    arrived[100:103] = [BASE_S + 100 * FRAME_S + 0.2 + k * 0.001 for k in range(3)]
    clock = MicClock()
    feed(clock, captures, arrived)
    for index, capture in enumerate(captures):
        assert clock.captured(index * FRAME_MS) == pytest.approx(capture, abs=1e-9)
    assert [start for start, _ in clock.anchors] == [0, 103 * FRAME_MS]


def test_frames_first_read_late_are_placed_by_the_earlier_ones_after_them() -> None:
    # The first frames queued behind the models loading, then read all at once.
    captures = steady(100)
    arrived = arrivals(captures, stalls={0: 1.5}, take_s=0.001)
    clock = MicClock()
    feed(clock, captures, arrived)
    for index, capture in enumerate(captures):
        assert clock.captured(index * FRAME_MS) == pytest.approx(capture, abs=1e-9)


def test_a_mic_clock_slowly_falling_behind_is_followed() -> None:
    # 0.2 ms a frame: far past any sound card's drift, so the test stays short.
    captures = [BASE_S + index * (FRAME_S + 0.0002) for index in range(2000)]
    clock = MicClock()
    errors = feed(clock, captures, captures)
    assert max(abs(e) for e in errors) < LATE_MS / 1000 + 0.002 * PAUSE_FRAMES
    assert len(clock.anchors) > 2


def test_only_anchors_within_the_kept_stretch_are_kept() -> None:
    clock = MicClock(keep_ms=1000)
    captures: list[float] = []
    for pause in range(10):
        captures += steady(60, start_s=BASE_S + len(captures) * FRAME_S + pause)
    feed(clock, captures, captures)
    starts = [start for start, _ in clock.anchors]
    assert starts[-1] == 540 * FRAME_MS and starts[0] >= starts[-1] - 1000 - 60 * FRAME_MS
    assert clock.captured(len(captures) * FRAME_MS - FRAME_MS) == pytest.approx(captures[-1])


def test_before_any_frame_a_capture_is_at_its_position() -> None:
    assert MicClock().captured(2000) == 2.0
    assert MicClock().settled
