"""Canonical JSON (RFC 8785) digests and the hash chain that links a run's events.

Pure: no Django, no I/O, no clock (the caller supplies each event's timestamp).
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from typing import Any

import rfc8785

from lab.events.types import Event, EventPayload, event_id_for

GENESIS_HASH = "0" * 64

# A number token stands between ':', '[' or ',' and ',', ']' or '}' (or the text's ends).
# Integers of 16+ digits may leave RFC 8785's ±2^53 domain and Python writes floats
# differently, so any such token (or a string that merely holds one) takes the reference path.
_RISKY_NUMBER = re.compile(
    r"(?:^|[:\[,])(?:-?\d{16,}|-?\d+(?:\.\d+(?:e[-+]\d+)?|e[-+]\d+)|-?Infinity|NaN)(?:[,\]}]|$)"
)


def canonical_json(value: Any) -> bytes:
    """RFC 8785 canonical JSON; the standard encoder's output where it provably agrees.

    The rfc8785 package is the reference, but pure Python: a 100,000-event report needs the
    C encoder for the values (ASCII text, small integers) where both write the same bytes.
    """
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # Non-ASCII text could sort keys differently (RFC 8785 orders by UTF-16 code units).
    if text.isascii() and _RISKY_NUMBER.search(text) is None:
        return text.encode()
    return rfc8785.dumps(value)


def digest(value: Any) -> str:
    """SHA-256 hex of the canonical JSON of a JSON-compatible value."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def event_body(event: Event) -> dict[str, Any]:
    """The hashed part of an event: everything except its own hash."""
    return event.model_dump(mode="json", exclude={"hash"})


def chain_event(*, seq: int, at: datetime, payload: EventPayload, prev_hash: str) -> Event:
    """Build the event that follows prev_hash in a chain, with its id and hash."""
    draft = Event(
        id=event_id_for(seq), seq=seq, at=at, payload=payload, prev_hash=prev_hash, hash=""
    )
    return draft.model_copy(update={"hash": digest(event_body(draft))})


class EventChain:
    """An in-memory run log that numbers, timestamps and chains each appended payload."""

    def __init__(self, events: list[Event] | None = None) -> None:
        self.events: list[Event] = list(events or [])

    @property
    def last_hash(self) -> str:
        return self.events[-1].hash if self.events else GENESIS_HASH

    def append(self, payload: EventPayload, *, at: datetime) -> Event:
        event = chain_event(
            seq=len(self.events) + 1, at=at, payload=payload, prev_hash=self.last_hash
        )
        self.events.append(event)
        return event
