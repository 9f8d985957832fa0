"""Opaque page cursors: the id of the last row a page showed, base64url-encoded (pure)."""

from __future__ import annotations

import base64
import binascii
import re

# At most 18 digits: every such id fits the 64-bit integer column it is compared with.
_PAYLOAD = re.compile(r"id:([1-9][0-9]{0,17})")
_NOT_OURS = "cursor is not one this API returned (use next_cursor as given)"
MAX_CURSOR_CHARS = 64


class BadCursor(ValueError):
    pass


def cursor_encode(last_id: int) -> str:
    """The cursor that continues after the row with this id."""
    if last_id < 1:
        raise ValueError(f"a row id is positive, got {last_id}")
    return base64.urlsafe_b64encode(f"id:{last_id}".encode()).rstrip(b"=").decode()


def cursor_decode(raw: str) -> int:
    """The id a cursor names; BadCursor for anything cursor_encode did not write."""
    text = raw.strip()
    if not text or len(text) > MAX_CURSOR_CHARS:
        raise BadCursor(_NOT_OURS)
    try:
        payload = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
    except (binascii.Error, ValueError):
        raise BadCursor(_NOT_OURS) from None
    match = _PAYLOAD.fullmatch(payload)
    if match is None:
        raise BadCursor(_NOT_OURS)
    return int(match[1])
