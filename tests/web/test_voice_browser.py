from __future__ import annotations

import base64
import time

import pytest

from lab.speech import tts
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.models]

# The caller's lines, each said once the agent has finished the turn that asks for it: the
# agent turn that must be in the transcript first, then the line.
CALLER_LINES = [
    ("How can I help", "Hi, I'd like to book an appointment for Tuesday morning."),
    ("I have Tuesday", "Actually, make that Thursday afternoon."),
    ("I have Thursday", "Yes, book it."),
]
# A line is said once the page's player has been idle this long: the agent has said its piece.
QUIET_S = 1.0
LIMIT_S = 90.0

# The page's microphone is a stream the test speaks into: getUserMedia hands the page a WebAudio
# stream, silent until window.__labSay plays a line (PCM16 at 16 kHz, base64) into it. Everything
# from the MediaStream on (the page's capture worklet, resampling, framing, the socket) is the
# page's own. A file on Chromium's fake device instead plays on the wall clock: on a loaded machine
# a line began while the agent was still reading back, and the call never reached its reference.
SPEAKING_MIC = """(() => {
  let context = null, out = null;
  const stream = () => {
    if (!out) {
      context = new AudioContext();
      out = context.createMediaStreamDestination();
    }
    return out.stream;
  };
  navigator.mediaDevices.getUserMedia = async () => stream();
  window.__labSay = (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const pcm = new Int16Array(bytes.buffer);
    const buffer = context.createBuffer(1, pcm.length, 16000);
    buffer.getChannelData(0).set(Float32Array.from(pcm, (v) => v / 32768));
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(out);
    source.start();
    return buffer.duration;
  };
})();"""


@pytest.fixture(scope="module")
def caller_lines() -> list[tuple[str, str]]:
    """Each caller line as piper says it, base64 PCM16, after the agent words it answers."""
    return [
        (after, base64.b64encode(tts.synthesize(line)).decode()) for after, line in CALLER_LINES
    ]


def wait_until_the_agent_is_quiet(page) -> None:
    """Until every agent turn in the transcript has played out and the player has been idle for
    QUIET_S (read from Python: the CSP forbids the eval a page-side wait would need)."""
    turns = page.locator("#transcript .turn.agent")
    deadline = time.monotonic() + LIMIT_S
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        played = page.evaluate("window.labVoice.utterancesPlayed")
        if page.evaluate("window.labVoice.agentSpeaking") or played < turns.count():
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= QUIET_S:
            return
        time.sleep(0.1)
    raise AssertionError("the agent never finished speaking")


def test_the_correction_scenario_passes_through_the_real_microphone_path(lab_server, caller_lines):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                *CHROMIUM_ARGS,
                "--use-fake-ui-for-media-stream",
                "--autoplay-policy=no-user-gesture-required",
            ],
        )
        page = browser.new_page()
        page.add_init_script(SPEAKING_MIC)
        page.set_default_timeout(LIMIT_S * 1000)
        page.goto(lab_server + "/")
        card = page.locator("#scenario-correction")
        card.locator("input[value=voice]").check()
        card.get_by_role("button", name="Start run").click()
        page.wait_for_url("**/runs/*/")
        page.get_by_role("button", name="Start the call").click()
        page.locator("#event-log li[data-type='agent.audio_started']").first.wait_for()
        page.locator("#mic-start").click()
        page.locator("#voice-panel[data-mic-state='listening']").wait_for()
        for after, line in caller_lines:
            page.locator("#transcript .turn.agent", has_text=after).wait_for()
            wait_until_the_agent_is_quiet(page)
            page.evaluate("(line) => window.__labSay(line)", line)
        page.locator("#transcript .turn.agent", has_text="Your reference is").wait_for()
        # The page's CSP forbids eval, so the counter is read once the call is through, not polled.
        assert page.evaluate("window.labVoice.framesSent") > 100
        page.get_by_role("button", name="End the call").click()
        verdict = page.locator('#verdict[data-final="true"]')
        verdict.wait_for()
        # One calm ended state: no refusal, no "no longer drives", nothing left to start.
        page.locator('#run[data-ended="true"]').wait_for()
        ended = {
            "status": page.locator("#voice-status").inner_text(),
            "notice": page.locator("#notice").inner_text().strip(),
            "controls": page.locator("#controls").inner_text().strip(),
            "mic": page.locator("#mic-start").is_visible(),
            "mic_state": page.evaluate("window.labVoice.state"),
        }
        # What a reload would show, the live page shows: the sealed recording, its download and
        # digest (the playhead follows it), with no reload.
        page.locator("#recording-download").wait_for()
        recording = {
            "digest": len(page.locator("#recording-digest").inner_text().strip()),
            "playhead": page.locator("#playhead").count(),
        }
        transcript = page.locator("#transcript").inner_text()
        events = page.locator("#event-log").inner_text()
        played = page.evaluate("window.labVoice.utterancesPlayed")
        result = verdict.get_attribute("data-verdict")
        browser.close()
    assert "Thursday" in transcript
    assert "asr.transcribed" in events and "vad.speech_ended" in events
    assert "caller (asr)" in events
    assert result == "PASS"
    assert ended == {
        "status": "The call has ended.",
        "notice": "",
        "controls": "This run has ended. Start another.",
        "mic": False,
        "mic_state": "ended",
    }
    assert played > 0 and "agent.audio_played" in events
    assert recording == {"digest": 64, "playhead": 1}
