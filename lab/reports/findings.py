"""What a verification check concludes: findings with a fixed kind and a free-text reason.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    """One result of a check; a blocking finding makes the report inconsistent."""

    kind: str
    reason: str
    blocking: bool = True
