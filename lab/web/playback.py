"""What the recording player needs: each event's time on the run clock, and the recording."""

from __future__ import annotations

import json
from typing import Any

from lab.events.recording_events import RecordingClosed
from lab.events.types import Event


def event_clock(events: list[Event]) -> dict[str, int]:
    """Each event's ms since run.started, the recording's sample 0 (none before it starts)."""
    started = next((e for e in events if e.type == "run.started"), None)
    if started is None:
        return {}
    return {e.id: round((e.at - started.at).total_seconds() * 1000) for e in events}


def recording_closed(events: list[Event]) -> RecordingClosed | None:
    return next(
        (e.payload for e in reversed(events) if isinstance(e.payload, RecordingClosed)), None
    )


def recording_context(events: list[Event], *, url: str | None, offer_file: bool) -> dict[str, Any]:
    """The player's context: the lab's copy at url (None: not here), or a file the reader picks."""
    closed = recording_closed(events)
    if url is None and closed is None:
        return {}
    return {
        "recording": {"url": url, "closed": closed, "offer_file": offer_file and closed},
        "event_clock_json": json.dumps(event_clock(events)),
    }
