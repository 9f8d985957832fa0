"""runscenarios --agent pipecat:… --channel voice against the reference bot in audio mode: the
scripted caller's piper audio, as the lab heard it, goes to the bot as raw-audio; the bot hears it
with its own STT and answers in its own voice (Piper through pipecat), which the lab plays and
times in place of its own TTS.

Voice runs take real time, so three scenarios stand for all: a correction, a repeated
confirmation and an interruption of the readback (each PASSes in process).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.management import call_command

from lab.events import store
from lab.events.models import Run
from lab.events.types import AgentAudioStarted, AgentInterrupted, AgentUtterance, Channel
from lab.speech import service
from tests.connectors.conftest import needs_pipecat

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.pipecat,
    pytest.mark.models,
    needs_pipecat,
]

SCENARIOS = ("correction", "double_confirmation", "interruption")


def test_in_audio_mode_the_bot_hears_the_caller_and_speaks_for_itself(
    pipecat_bot: Callable[..., str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    synthesized: list[str] = []
    lab_tts = service.synthesize

    async def spy(text: str) -> bytes:
        synthesized.append(text)
        return await lab_tts(text)

    monkeypatch.setattr(service, "synthesize", spy)
    url = pipecat_bot(audio=True)
    args = ["--agent", f"pipecat:{url}", "--channel", "voice"]
    try:
        call_command("runscenarios", *args, *(f"--scenario={name}" for name in SCENARIOS))
    except SystemExit as exit_info:
        assert exit_info.code == 0
    captured = capsys.readouterr()
    verdicts = dict(line.split()[:2] for line in captured.out.splitlines() if line.strip())
    assert verdicts == dict.fromkeys(SCENARIOS, "PASS"), captured.err

    runs = list(Run.objects.filter(channel=Channel.VOICE).order_by("created_at"))
    assert [run.scenario_id for run in runs] == list(SCENARIOS)
    for run in runs:
        payloads = [event.payload for event in store.run_events(run)]
        said = [p.text for p in payloads if isinstance(p, AgentUtterance)]
        voiced = {p.utterance_event_id for p in payloads if isinstance(p, AgentAudioStarted)}
        assert said, run.scenario_id
        # Every word the bot said was heard in its own voice: the lab synthesized none of it
        # (only the scripted caller's lines), and timed each utterance's audio.
        assert not set(said) & set(synthesized), run.scenario_id
        utterances = [e for e in store.run_events(run) if isinstance(e.payload, AgentUtterance)]
        cut = {p.utterance_event_id for p in payloads if isinstance(p, AgentInterrupted)}
        assert {e.id for e in utterances} - cut <= voiced, run.scenario_id
    interrupted = [
        p for p in (e.payload for e in store.run_events(runs[2])) if isinstance(p, AgentInterrupted)
    ]
    assert interrupted, "the caller cut into the bot's readback"
