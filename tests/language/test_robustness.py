"""No caller text, in any order and with any barge-in, crashes the agent or leaves it silent."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lab.events.types import Action, AgentUtterance, CallerUnderstood
from tests.language.harness import Call

# Words from every corner of what the agent reads, so random lines reach deep paths.
WORDS = [
    "yes",
    "no",
    "yeah",
    "okay",
    "sure",
    "maybe",
    "not",
    "actually",
    "make",
    "that",
    "it",
    "instead",
    "book",
    "refund",
    "order",
    "number",
    "monday",
    "tuesday",
    "thursday",
    "friday",
    "tomorrow",
    "next",
    "the",
    "14th",
    "21st",
    "morning",
    "afternoon",
    "evening",
    "after",
    "before",
    "lunch",
    "noon",
    "around",
    "about",
    "between",
    "and",
    "to",
    "two",
    "three",
    "half",
    "past",
    "have",
    "passed",
    "quarter",
    "4512",
    "4,512",
    "4500,",
    "12",
    "for",
    "5.1",
    "forty",
    "thirty-five",
    "dollars",
    "$25.50",
    "25.00",
    "cents",
    "lock",
    "in",
    "go",
    "ahead",
    "confirm",
    "I'm",
    "still",
    "here",
    "can",
    "you",
    "hear",
    "me",
    "repeat",
    "what",
    "time",
    "was",
    "that",
    "hours",
    "price",
    "robot",
    "cancel",
    "reschedule",
    "transfer",
    "manager",
    "weather",
    "hello",
    "um",
    "[BLANK_AUDIO]",
    "?",
    ".",
    ",",
    "!",
    "first",
    "thing",
    "end",
    "of",
    "day",
    "ish",
]

lines = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
)
turns = st.lists(st.tuples(lines, st.booleans()), min_size=1, max_size=8)
tool_sets = st.sampled_from(
    [frozenset(Action), frozenset({Action.BOOK}), frozenset({Action.REFUND})]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=turns, guarded=st.booleans(), tools=tool_sets)
def test_every_caller_turn_is_answered_and_nothing_raises(
    turns: list[tuple[str, bool]], guarded: bool, tools: frozenset[Action]
) -> None:
    call = Call(guarded=guarded, tools=tools)
    for text, interrupting in turns:
        said = call.say(text, interrupting=interrupting)
        assert said, f"no answer to {text!r}"
        assert all(isinstance(utterance, AgentUtterance) and utterance.text for utterance in said)
    understood: list[CallerUnderstood] = call.of_type(CallerUnderstood)
    assert len(understood) == len(turns)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_any_text_is_understood_with_a_confirmation_outcome_and_its_cue(text: str) -> None:
    understanding = Call().agent.understand(text)
    event = understanding.event("ev-00001")
    assert event.confirmation is understanding.confirmation
    # The cue is the caller's own words, so a verdict can quote it.
    for run in (understanding.cue or "").split(" … "):
        assert run in text
    assert set(understanding.ambiguous).isdisjoint(understanding.args)
