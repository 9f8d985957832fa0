"""What a window learns when its run ends, beyond the shared panel: what a reload would show.

Rendered per window, since the recording's URL is the owner's or the share link's own and only
the owner's page has an MCP button to take away.
"""

from __future__ import annotations

from django.template.loader import render_to_string
from django.urls import reverse

from lab.events.models import Run
from lab.events.types import Channel, Event
from lab.runs.recording_files import recording_path
from lab.web.panel import TEMPLATE
from lab.web.playback import recording_context


def recording_url(run: Run, share: str) -> str:
    """This window's way to the recording: the share link's, or the owner's."""
    if share:
        return reverse("shared_recording_wav", args=[share])
    return reverse("run_recording_wav", args=[run.id])


def run_end_fragment(*, run: Run, events: list[Event], owner: bool, share: str = "") -> str:
    """The sealed recording (voice runs) and, for the owner, no MCP button."""
    context: dict[str, object] = {"mcp_gone": owner and bool(run.agent_connector)}
    if run.channel == Channel.VOICE.value and recording_path(str(run.id)).is_file():
        context.update(recording_context(events, url=recording_url(run, share), offer_file=False))
    return render_to_string(f"{TEMPLATE}#run_end_oob", context)
