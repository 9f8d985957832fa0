"""What the scripted caller did beside its lines: a cue it went on without, a persona answer."""

from __future__ import annotations

from typing import Literal

from lab.events.vocabulary import PayloadModel

# The cues a scripted line prefers to wait for: a proposal read back, a readback to cut into, a
# write the agent has started (and not yet finished).
Cue = Literal["proposal", "readback", "commit_started"]
# What an agent may ask a caller that no scripted line says; the scenario's persona answers it.
PersonaField = Literal["name", "phone", "email", "date_of_birth", "reason"]


class CueMissed(PayloadModel):
    """A scripted line's cue did not come within the bound: the line was said without it."""

    type: Literal["caller.cue_missed"] = "caller.cue_missed"
    line: int
    cue: Cue
    # On the conversation's clock (LAB_TIME_SCALE undone), from the line's start to giving up.
    waited_ms: int


class PersonaAnswered(PayloadModel):
    """The agent asked for something the script does not say; the caller answers from its persona.

    The caller.utterance that follows holds the answer; it is never a confirmation.
    """

    type: Literal["caller.persona_answered"] = "caller.persona_answered"
    asked: list[PersonaField]
    utterance_event_id: str
