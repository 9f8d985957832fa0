"""A guarded voice run of `correction` whose speech models are stand-ins: the agent's voice is
fixed audio, smart-turn is undecided, and webrtcvad (its callers' stand-in hears speech in any
loud frame) decides speech alone. Frames pushed here may come faster than real time: the socket
paces them, not the voice path."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.conf import settings

from lab.events.types import Channel, Mode
from lab.runs import turn_taking
from lab.runs.services import run_start
from lab.runs.session import RunSession
from lab.scenarios.catalog import contract_get
from lab.speech import service


async def stand_in_voice_run(monkeypatch: pytest.MonkeyPatch, *, agent_pcm: bytes) -> RunSession:
    async def synthesize(text: str) -> bytes:
        return agent_pcm

    async def probability(pcm: bytes) -> float:
        return 0.3

    monkeypatch.setattr(service, "synthesize", synthesize)
    monkeypatch.setattr(turn_taking, "turn_probability", probability)
    # Silero would hear no speech in the stand-ins' flat frames and keep every segment unstarted.
    monkeypatch.setattr(settings, "LAB_VAD_SILERO_CONFIRMS", False)
    run = await database_sync_to_async(run_start)(
        scenario_id="correction", mode=Mode.GUARDED, channel=Channel.VOICE
    )
    return RunSession(run=run, contract=contract_get("correction"))
