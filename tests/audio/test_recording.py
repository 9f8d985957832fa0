"""The stereo mix: caller left, agent right, on the run's sample clock, held back and capped."""

from __future__ import annotations

import io
import wave

import numpy as np

from lab.audio.frames import FRAME_SAMPLES, SAMPLE_RATE
from lab.audio.recording import CALLER_GAP_SAMPLES, StereoMix, caller_ms_at, wav_header

FRAME = np.arange(1, FRAME_SAMPLES + 1, dtype="<i2")
BIG = 10**9


def frames_of(mix: StereoMix) -> np.ndarray:
    return np.frombuffer(mix.take_all(), dtype="<i2").reshape(-1, 2)


def test_caller_frames_received_back_to_back_are_contiguous_and_a_pause_is_silence():
    mix = StereoMix(max_data_bytes=BIG)
    for index in range(3):  # a loaded loop delivers them nearly at once
        mix.caller_frame(FRAME.tobytes(), arrived=1000 + FRAME_SAMPLES + index, stream=index * 320)
    later = 1000 + 3 * FRAME_SAMPLES + CALLER_GAP_SAMPLES + 5000
    mix.caller_frame(FRAME.tobytes(), arrived=later, stream=3 * 320)
    out = frames_of(mix)
    assert list(out[1000 : 1000 + 3 * FRAME_SAMPLES, 0]) == list(FRAME) * 3
    assert not out[:1000, 0].any() and not out[1000 + 3 * FRAME_SAMPLES : later - 320, 0].any()
    assert list(out[later - FRAME_SAMPLES : later, 0]) == list(FRAME)
    assert not out[:, 1].any()  # nothing of the caller on the agent's channel
    pieces = [(p.stream // 16, p.at // 16) for p in mix.caller_pieces]
    assert len(pieces) == 2
    assert caller_ms_at(pieces, 40) == 1000 // 16 + 40
    assert caller_ms_at(pieces, 60) == (later - FRAME_SAMPLES) // 16


def test_agent_audio_plays_where_sent_and_an_interruption_cuts_it_from_where_the_caller_began():
    mix = StereoMix(max_data_bytes=BIG)
    agent = np.full(SAMPLE_RATE, 700, dtype="<i2").tobytes()  # one second
    mix.agent_audio("ev-00002", agent, at=1600)
    mix.agent_cut(1600 + 8000)  # half a second in
    out = frames_of(mix)
    assert (out[1600:9600, 1] == 700).all()
    assert not out[9600:, 1].any() and not out[:1600, 1].any()
    assert (mix.agent_spans[0].start, mix.agent_spans[0].end) == (1600, 9600)


def test_the_browsers_account_of_what_it_played_silences_the_rest():
    mix = StereoMix(max_data_bytes=BIG)
    mix.agent_audio("ev-00002", np.full(16000, 700, dtype="<i2").tobytes(), at=0)
    mix.agent_played("ev-00002", 4000)
    out = frames_of(mix)
    assert (out[:4000, 1] == 700).all() and not out[4000:, 1].any()
    assert mix.agent_spans[0].played == 4000


def test_audio_already_taken_out_is_never_rewritten_and_the_window_moves_on():
    mix = StereoMix(max_data_bytes=BIG)
    mix.agent_audio("ev-00002", np.full(1000, 5, dtype="<i2").tobytes(), at=0)
    first = mix.take(600)
    mix.agent_cut(100)  # too late for what was taken: only the window is cut
    rest = np.frombuffer(mix.take_all(), dtype="<i2").reshape(-1, 2)
    assert len(first) == 600 * 4 and (np.frombuffer(first, "<i2")[1::2] == 5).all()
    assert mix.written == 1000 and not rest[:, 1].any()


def test_the_cap_stops_the_recording_and_says_it_was_truncated():
    mix = StereoMix(max_data_bytes=4 * 1000)
    mix.caller_frame(FRAME.tobytes(), arrived=FRAME_SAMPLES, stream=0)
    assert not mix.truncated
    mix.agent_audio("ev-00002", np.full(5000, 9, dtype="<i2").tobytes(), at=0)
    data = mix.take_all()
    assert len(data) == 4 * 1000 and mix.truncated
    mix.caller_frame(FRAME.tobytes(), arrived=3000, stream=320)
    assert mix.take_all() == b""


def test_the_header_makes_a_16_khz_pcm16_stereo_wav():
    data = np.arange(800, dtype="<i2").tobytes()
    with wave.open(io.BytesIO(wav_header(len(data)) + data)) as wav:
        assert (wav.getnchannels(), wav.getframerate(), wav.getsampwidth()) == (2, 16000, 2)
        assert wav.getnframes() == 400
