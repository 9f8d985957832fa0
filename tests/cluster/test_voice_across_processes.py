"""The scaled-out topology end to end: a voice run spoken into one web process (its speech done
by a speech worker) is watched live from another, whose tab is refused as a second driver;
everything on PostgreSQL + Redis."""

from __future__ import annotations

import asyncio
import http.client

import pytest

from lab.cluster.calls import SILENCE, Microphone, Window, run_events, start_run
from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events.chain import GENESIS_HASH, digest, event_body
from lab.scenarios.catalog import contract_get
from lab.speech import tts
from tests.cluster.conftest import needs_scaled

pytestmark = [needs_scaled, pytest.mark.models]

# Bounds for a loaded two-core machine running two web processes and the models.
WAIT_S = 180
LINES = [
    "I'd like an appointment on Tuesday morning.",
    "Actually, make that Friday afternoon.",
    "Yes, book it.",
]


def speech(text: str) -> bytes:
    return tts.synthesize(text) + SILENCE * 40


async def test_a_voice_run_driven_on_one_process_is_watched_live_on_the_other(scaled_lab):
    one, two = scaled_lab.web_ports
    pcm = [speech(line) for line in LINES]
    run_id, cookie = await asyncio.to_thread(start_run, one, "correction", "voice")
    async with asyncio.timeout(WAIT_S * 3):
        driver = await Window.open(one, run_id, cookie)
        await driver.until('data-role="driver"')
        # The same owner's second tab, on the other process: it watches, and may not drive.
        watcher = await Window.open(two, run_id, cookie)
        await watcher.until("Watching: another window drives this run")
        await driver.until_agent_speaks()
        microphone = Microphone(driver)

        await microphone.hear_out()
        await microphone.speak(pcm[0])
        await driver.until("Shall I book it?")
        await microphone.hear_out()
        await microphone.speak(pcm[1])
        await driver.until("Friday at 2:30 PM")
        # Live on the other process, through the run's channel-layer group.
        await watcher.until("Friday at 2:30 PM")
        refused_at = len(watcher.texts)
        await watcher.say("Yes, book it.")
        await watcher.socket.send_bytes(pcm[2][:6400])
        await watcher.until("this window is watching", since=refused_at)

        await microphone.hear_out()
        await microphone.speak(pcm[2])
        await driver.until("Your reference is")
        await watcher.until("Your reference is")
        await microphone.hear_out()
        await microphone.stop()
        await driver.send({"action": "end"})
        await driver.until('data-final="true"')
        await watcher.until('data-final="true"')
        await driver.close()
        await watcher.close()

    events = await asyncio.to_thread(run_events, two, run_id, cookie)
    previous = GENESIS_HASH
    for seq, event in enumerate(events, start=1):
        assert (event.seq, event.prev_hash, event.hash) == (
            seq,
            previous,
            digest(event_body(event)),
        )
        previous = event.hash
    said = [e.payload for e in events if e.type == "caller.utterance"]
    assert [u.source for u in said] == ["asr", "asr", "asr"]
    assert "friday" in said[1].text.lower()
    assert sum(e.type == "tool.commit.succeeded" for e in events) == 1
    assert sum(e.type == "run.started" for e in events) == 1
    assert evaluate(contract_get("correction"), events).verdict is Verdict.PASS
    assert not scaled_lab.dead(), [child.tail() for child in scaled_lab.dead()]


def test_the_proxy_serves_pages_and_run_sockets(scaled_lab):
    connection = http.client.HTTPConnection("127.0.0.1", scaled_lab.shape.port, timeout=60)
    connection.request("GET", "/")
    assert connection.getresponse().status == 200
    connection.close()
    run_id, cookie = start_run(scaled_lab.shape.port, "correction", "typed")

    async def through_proxy() -> None:
        window = await Window.open(scaled_lab.shape.port, run_id, cookie)
        await asyncio.wait_for(window.until('data-role="driver"'), 60)
        await asyncio.wait_for(window.until('data-speaking="false"'), 60)
        await window.close()

    asyncio.run(through_proxy())
