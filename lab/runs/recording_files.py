"""Voice runs' recordings on disk: one WAV per run in LAB_RECORDING_DIR, appended as it grows.

The header is rewritten after every append, so the file is a valid WAV at any moment and a
crash loses only what had not been appended yet. Nothing here touches the database: appends
never wait on, or lock, the log's writes.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from lab.audio.recording import FRAME_BYTES_STEREO, WAV_HEADER_BYTES, wav_header


@dataclass(frozen=True)
class Sealed:
    digest: str
    file_bytes: int
    data_bytes: int


def recording_path(run_id: str) -> Path:
    # run_id is the run's UUID (never the caller's text), so it is a safe file name.
    return Path(settings.LAB_RECORDING_DIR) / f"{run_id}.wav"


def recording_append(*, run_id: str, start_byte: int, data: bytes, max_file_bytes: int) -> bool:
    """Write PCM data meant for data offset start_byte: a gap is silence, an overlap is dropped
    (a run resumed on another process starts its window a little before its first audio).
    Returns whether the cap cut something off."""
    path = recording_path(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "r+b" if path.exists() else "w+b") as file:
        size = file.seek(0, os.SEEK_END)
        stored = max(0, size - WAV_HEADER_BYTES)
        if start_byte > stored:
            data = bytes(start_byte - stored) + data
        else:
            data = data[stored - start_byte :]
        room = max_file_bytes - WAV_HEADER_BYTES - stored
        room -= room % FRAME_BYTES_STEREO
        truncated = len(data) > room
        data = data[: max(room, 0)]
        if size < WAV_HEADER_BYTES:
            file.seek(0)
            file.write(wav_header(0))
        file.write(data)
        file.seek(0)
        file.write(wav_header(stored + len(data)))
    return truncated


def recording_seal(run_id: str) -> Sealed | None:
    """The SHA-256 of the file as the run page serves it; None: nothing was recorded."""
    path = recording_path(run_id)
    if not path.exists():
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    size = path.stat().st_size
    return Sealed(digest=digest.hexdigest(), file_bytes=size, data_bytes=size - WAV_HEADER_BYTES)
