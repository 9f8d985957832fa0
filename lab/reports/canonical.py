"""The report body digest: canonical JSON of every member except the integrity/signature block.

Pure: no Django, no I/O.
"""

from __future__ import annotations

from typing import Any

from lab.events.chain import digest

UNSIGNED_MEMBERS = ("integrity", "signature")


def body_digest(document: dict[str, Any]) -> str:
    """The digest a report's integrity block states: every member except integrity/signature."""
    return digest({k: v for k, v in document.items() if k not in UNSIGNED_MEMBERS})
