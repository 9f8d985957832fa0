"""The scripted agent's fixed lines and the frames its varying replies are built around.

Pure. Speech synthesizes them at warm-up (lab/speech/service.py), so no caller waits on them.
"""

from __future__ import annotations

from lab.scripted import answers, wording
from lab.scripted.dialogue import ScriptedAgent
from lab.scripted.steps import Say

# Said word for word by the dialogue (lab/scripted/dialogue.py), whatever the call is about.
_SAID_AS_IS = (
    "Okay, I won't go ahead with that.",
    "Yes, I'm here. How can I help?",
    "That's taking longer than usual; let me check.",
    "I've checked: it did not go through, so nothing was done.",
    "The system didn't answer in time. Let me try once more.",
    "I couldn't get an answer, so I can't offer anything yet.",
    "I can't rely on that result, so I won't offer it.",
    "I need a clear yes before I go ahead. Shall I?",
    "Sorry, you cut in before I finished. Here it is again.",
    "That request has changed, so I won't act on it.",
)
# Pieces that open or close a reply around its varying words: readbacks end on a question,
# re-asks and reconfirmations open on a clause the reply is synthesized in on its own.
FRAMES = (
    "Shall I book it?",
    "Shall I go ahead?",
    "Just to be sure:",
    "Got it,",
    "I've checked,",
)


def fixed_lines() -> tuple[str, ...]:
    """Every line and frame worth having synthesized before the first call: greeting first."""
    agent = ScriptedAgent(naive=False)
    opening = [step.text for step in (*agent.greet(), *agent.farewell()) if isinstance(step, Say)]
    lines = (
        *opening,
        wording.NOT_CAUGHT,
        wording.NOTHING_WAITING,
        wording.WHICH_ACTION,
        wording.SCOPE,
        wording.NO_FACTS,
        wording.IDENTITY,
        wording.CAPABILITIES,
        wording.COMMIT_RETRY,
        wording.COMMIT_UNKNOWN,
        f"How can I help? {wording.CAPABILITIES}",
        answers.NOT_COVERED,
        *_SAID_AS_IS,
        *FRAMES,
    )
    return tuple(dict.fromkeys(lines))
