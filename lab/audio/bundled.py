"""Model files that ship inside installed wheels (Silero VAD, smart-turn): found, never fetched."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path


def wheel_file(package: str, file: str, missing: type[RuntimeError]) -> Path:
    """The file inside the installed distribution; `missing` says which is absent."""
    try:
        path = Path(str(distribution(package).locate_file(file)))
    except PackageNotFoundError:
        raise missing(f"{package} is not installed (make install)") from None
    if not path.is_file():
        raise missing(f"{package} has no {file}")
    return path
