"""What an agent's utterance asks the caller for that no scripted line says: only asks count."""

from __future__ import annotations

import pytest

from lab.language.asks import asked_for

ASKS = [
    ("Can I get your name, please?", ("name",)),
    ("May I have your full name?", ("name",)),
    ("Who am I speaking with?", ("name",)),
    ("And who's calling?", ("name",)),
    ("What name should I put the booking under?", ("name",)),
    ("Please spell your last name.", ("name",)),
    ("Let me take your name first.", ("name",)),
    ("What's the best number to reach you?", ("phone",)),
    ("Could I get a phone number for the appointment?", ("phone",)),
    ("And a callback number?", ("phone",)),
    ("Is there a mobile we can text you at?", ("phone",)),
    ("Could you give me a number where we can reach you?", ("phone",)),
    ("What email should I send the confirmation to?", ("email",)),
    ("Can you spell your e-mail address?", ("email",)),
    ("What's your date of birth?", ("date_of_birth",)),
    ("And your D.O.B.?", ("date_of_birth",)),
    ("When were you born?", ("date_of_birth",)),
    ("I'll need your birthdate to find your file.", ("date_of_birth",)),
    ("What's the reason for your visit?", ("reason",)),
    ("What brings you in today?", ("reason",)),
    ("What is the appointment for?", ("reason",)),
    ("And what's it for?", ("reason",)),
    ("What seems to be the problem?", ("reason",)),
    ("What would you like to be seen for?", ("reason",)),
    ("Can I get your name and a phone number?", ("name", "phone")),
    (
        "Thanks. What's your date of birth and the reason for your visit?",
        ("date_of_birth", "reason"),
    ),
    ("I have Tuesday at 9:30 AM. Before I book it, can I get your name?", ("name",)),
    ("What\u2019s your email?", ("email",)),
    ("WHAT IS YOUR PHONE NUMBER?", ("phone",)),
]

NOT_ASKS = [
    "Hello, you have reached the booking line. How can I help?",
    "I have Tuesday at 9:30 AM. Shall I book it?",
    "Which day would you like?",
    "What's the order number?",
    "Booked. Your reference is R-1234.",
    "Thanks, Dana. I'll text your phone a reminder.",
    "We'll email you the confirmation.",
    "Your name is on the list.",
    "Is there anything else I can help you with?",
    "What time works for you?",
    "Sorry, that did not work: the calendar has no slot.",
]


@pytest.mark.parametrize(("text", "fields"), ASKS)
def test_it_reads_what_an_agent_asks_for(text: str, fields: tuple[str, ...]) -> None:
    assert asked_for(text) == fields


@pytest.mark.parametrize("text", NOT_ASKS)
def test_it_reads_nothing_into_talk_that_asks_for_no_particulars(text: str) -> None:
    assert asked_for(text) == ()
