"""The fixed lines speech makes at warm-up are the ones the scripted agent says."""

from __future__ import annotations

from pathlib import Path

from lab.scripted import fixed_lines as module
from lab.scripted.dialogue import ScriptedAgent
from lab.scripted.fixed_lines import FRAMES, fixed_lines

DIALOGUE = Path(module.__file__).with_name("dialogue.py").read_text()
WORDING = Path(module.__file__).with_name("wording.py").read_text()


def test_the_greeting_comes_first_as_the_agent_says_it():
    assert fixed_lines()[0] == ScriptedAgent(naive=False).greet()[0].text  # type: ignore[union-attr]


def test_every_line_said_as_is_is_still_in_the_dialogue():
    for line in module._SAID_AS_IS:
        assert f'"{line}"' in DIALOGUE, line


def test_the_readback_frames_are_what_the_readbacks_say():
    for frame in ("Shall I book it?", "Shall I go ahead?", "Just to be sure:"):
        assert frame in WORDING, frame
    assert set(FRAMES) <= set(fixed_lines())


def test_no_line_is_listed_twice():
    lines = fixed_lines()
    assert len(lines) == len(set(lines))
