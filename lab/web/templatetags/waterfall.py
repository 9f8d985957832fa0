"""{{ events|waterfalls }}: a log's voice-turn waterfalls, for pages that hold a report's events."""

from __future__ import annotations

from typing import Any

from django import template

from lab.events.types import Event
from lab.web.waterfall import Waterfall
from lab.web.waterfall import waterfalls as turn_waterfalls

register = template.Library()


@register.filter
def waterfalls(events: Any) -> list[Waterfall]:
    """The waterfalls of `events`; anything that is not a list of events (no report) has none."""
    if not isinstance(events, list) or not all(isinstance(e, Event) for e in events):
        return []
    return turn_waterfalls(events)
