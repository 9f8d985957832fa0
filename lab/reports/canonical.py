"""RFC 8785 canonical JSON at the speed a 100,000-event report needs, and the body digest.

Pure: no Django, no I/O. The rfc8785 package is the reference; it is pure Python, so values
that the standard library's encoder provably writes identically take the fast path.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from lab.events.chain import canonical_json

# A number token stands between ':', '[' or ',' and ',', ']' or '}' (or the text's ends).
# Integers of 16+ digits may leave RFC 8785's ±2^53 domain and Python writes floats
# differently, so any such token (or a string that merely holds one) takes the reference path.
_RISKY_NUMBER = re.compile(
    r"(?:^|[:\[,])(?:-?\d{16,}|-?\d+(?:\.\d+(?:e[-+]\d+)?|e[-+]\d+)|-?Infinity|NaN)(?:[,\]}]|$)"
)
UNSIGNED_MEMBERS = ("integrity", "signature")


def canonical_bytes(value: Any) -> bytes:
    """The RFC 8785 canonical JSON of a JSON value; byte-identical to lab.events.chain."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # Non-ASCII text could sort keys differently (RFC 8785 orders by UTF-16 code units).
    if text.isascii() and _RISKY_NUMBER.search(text) is None:
        return text.encode()
    return canonical_json(value)


def sha256_hex(value: Any) -> str:
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def body_digest(document: dict[str, Any]) -> str:
    """The digest a report's integrity block states: every member except integrity/signature."""
    return sha256_hex({k: v for k, v in document.items() if k not in UNSIGNED_MEMBERS})
