"""runscenarios --agent openai:URL --channel voice: the lab runs the loop pipecat and LiveKit run
around an LLM. Its VAD and ASR hear the scripted caller's audio, the transcript goes to the
reference server as user messages, and its TTS speaks the replies, so barge-in and timing are
the lab's own. The verdicts are the in-process ones, and a faulty habit still FAILs.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lab.events import store
from lab.events.models import Run
from lab.events.types import AgentAudioStarted, AgentUtterance, CallerUtterance, Channel
from lab.speech import service
from tests.connectors.verdicts import scenario_verdicts

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.models]

Start = Callable[[str | None], str]


def _verdicts(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, str], str]:
    return scenario_verdicts(capsys, "--channel", "voice", *args)


def test_voice_runs_through_the_openai_connector_get_the_in_process_verdicts(
    reference_server: Start, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    synthesized: list[str] = []
    lab_tts = service.synthesize

    async def spy(text: str) -> bytes:
        synthesized.append(text)
        return await lab_tts(text)

    monkeypatch.setattr(service, "synthesize", spy)
    scenarios = ("--scenario", "correction", "--scenario", "double_confirmation")
    through, reasons = _verdicts(capsys, "--agent", f"openai:{reference_server(None)}", *scenarios)
    assert through == {"correction": "PASS", "double_confirmation": "PASS"}, reasons
    for run in Run.objects.filter(channel=Channel.VOICE):
        payloads = [event.payload for event in store.run_events(run)]
        heard = [p for p in payloads if isinstance(p, CallerUtterance)]
        assert heard and all(p.source == "asr" for p in heard), run.scenario_id
        said = [e for e in store.run_events(run) if isinstance(e.payload, AgentUtterance)]
        voiced = {p.utterance_event_id for p in payloads if isinstance(p, AgentAudioStarted)}
        # The lab's own TTS voiced every reply, and the caller heard each one start.
        assert {e.id for e in said} <= voiced, run.scenario_id
        spoken = " ".join(synthesized)
        assert all(e.payload.text in spoken for e in said), run.scenario_id


def test_a_faulty_agent_on_the_voice_channel_still_fails_what_exposes_it(
    reference_server: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    url = reference_server("double-book")
    args = ("--agent", f"openai:{url}", "--as-is", "--scenario", "double_confirmation")
    through, reasons = _verdicts(capsys, *args)
    assert through == {"double_confirmation": "FAIL"}
    assert "executed_once" in reasons, reasons
