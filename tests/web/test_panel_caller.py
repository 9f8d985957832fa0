"""The panel says when the scripted caller went on without its cue, and when it answered from
its persona: both are in the log, so the page and the report show them."""

from __future__ import annotations

from datetime import UTC, datetime

from lab.events.chain import EventChain
from lab.events.types import CueMissed, PersonaAnswered
from lab.web.event_lines import summarize
from lab.web.panel import decision_item


def test_a_missed_cue_is_summarized_and_listed_beside_the_decisions() -> None:
    chain = EventChain()
    event = chain.append(CueMissed(line=1, cue="proposal", waited_ms=4012), at=datetime.now(UTC))

    assert summarize(event) == (
        "caller line 1 said without its cue: no proposal came in the 4012 ms it waited"
    )
    item = decision_item(event)
    assert item is not None and item.title == "Cue missed" and item.tone == "info"


def test_a_persona_answer_says_what_the_agent_asked_for() -> None:
    chain = EventChain()
    asked = PersonaAnswered(asked=["name", "phone"], utterance_event_id="ev-00007")
    event = chain.append(asked, at=datetime.now(UTC))

    assert summarize(event) == (
        "the agent asked for name, phone; the caller answers from its persona"
    )
    assert decision_item(event) is None
