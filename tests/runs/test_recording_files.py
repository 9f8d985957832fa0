"""The recording on disk: appended where each chunk belongs, a valid WAV after every append."""

from __future__ import annotations

import hashlib
import wave

from lab.runs.recording_files import recording_append, recording_path, recording_seal

RUN = "0b0e2b4e-7a8b-4a55-9a64-3f4f1b0c2d11"


def frames(path) -> bytes:
    with wave.open(str(path)) as wav:
        assert wav.getnchannels() == 2 and wav.getframerate() == 16000
        return wav.readframes(wav.getnframes())


def test_a_gap_is_silence_an_overlap_is_dropped_and_the_header_follows():
    recording_append(run_id=RUN, start_byte=0, data=b"\x01" * 8, max_file_bytes=10**6)
    # A resumed run's window starts a little before what is stored: the overlap is dropped.
    recording_append(run_id=RUN, start_byte=4, data=b"\x02" * 8, max_file_bytes=10**6)
    recording_append(run_id=RUN, start_byte=16, data=b"\x03" * 4, max_file_bytes=10**6)
    assert frames(recording_path(RUN)) == b"\x01" * 8 + b"\x02" * 4 + bytes(4) + b"\x03" * 4


def test_the_cap_keeps_whole_stereo_frames_and_says_it_cut():
    assert not recording_append(run_id=RUN, start_byte=0, data=bytes(40), max_file_bytes=90)
    assert recording_append(run_id=RUN, start_byte=40, data=bytes(40), max_file_bytes=90)
    raw = recording_path(RUN).read_bytes()
    assert len(raw) == 44 + 44  # 46 bytes of room, whole 4-byte frames: 44
    sealed = recording_seal(RUN)
    assert sealed is not None and sealed.digest == hashlib.sha256(raw).hexdigest()
    assert sealed.file_bytes == len(raw) and sealed.data_bytes == 44


def test_a_run_that_recorded_nothing_has_nothing_to_seal():
    assert recording_seal("11111111-2222-3333-4444-555555555555") is None
