"""The agent's fixed lines are synthesized at warm-up: a call finds them made."""

from __future__ import annotations

import pytest

from lab.scripted.fixed_lines import fixed_lines
from lab.speech import service, tts

pytestmark = pytest.mark.models


@pytest.fixture
def synthesized(monkeypatch) -> list[str]:
    """Texts the voice really synthesized, from a cold phrase cache."""
    made: list[str] = []
    real = tts.synthesize

    def counted(text: str) -> bytes:
        made.append(text)
        return real(text)

    service.sentence_pcm.cache_clear()
    monkeypatch.setattr(tts, "synthesize", counted)
    return made


async def test_a_presynthesized_phrase_is_served_without_synthesizing_it_again(synthesized):
    models = service.InProcess()
    greeting = fixed_lines()[0]
    await models.presynthesize([greeting])
    made = list(synthesized)
    assert made == tts.chunks(greeting)
    for chunk in tts.chunks(greeting):
        assert await models.synthesize(chunk) == service.sentence_pcm(chunk)
    assert synthesized == made  # served from the cache: the voice was not asked again
    await models.synthesize("Tuesday at 10:00 AM.")
    assert synthesized == [*made, "Tuesday at 10:00 AM."]  # a phrase never made is made now


async def test_warm_up_makes_the_greeting_at_once_and_the_other_lines_while_no_call_waits(
    synthesized,
):
    models = service.InProcess()
    await models.warm()
    greeting = fixed_lines()[0]
    assert synthesized == tts.chunks(greeting)  # before warm() returns: the greeting only
    # A call's own synthesis goes first; the fixed lines wait for the thread to be free.
    await models.synthesize("Tuesday at 10:00 AM.")
    assert synthesized[len(tts.chunks(greeting))] == "Tuesday at 10:00 AM."
    assert models._background is not None
    await models._background
    every = {chunk for line in fixed_lines() for chunk in tts.chunks(line)}
    assert set(synthesized) == every | {"Tuesday at 10:00 AM."}
    made = len(synthesized)
    for chunk in sorted(every):
        await models.synthesize(chunk)
    assert len(synthesized) == made  # the calls after warm-up pay for none of them
