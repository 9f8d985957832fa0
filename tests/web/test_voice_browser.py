from __future__ import annotations

import wave

import pytest

from lab.audio.frames import SAMPLE_RATE
from lab.speech import tts
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.models]

# When each caller line starts in the recording, in seconds: late enough that the agent's
# readback before it has finished on a busy two-core machine.
CALLER_TRACK = [
    (1.0, "Hi, I'd like to book an appointment for Tuesday morning."),
    (14.0, "Actually, make that Thursday afternoon."),
    (28.0, "Yes, book it."),
]
TRACK_SECONDS = 75.0


@pytest.fixture(scope="module")
def caller_recording(tmp_path_factory) -> str:
    """A WAV of the correction scenario's caller, made with piper, for Chromium's fake mic."""
    track = bytearray(int(TRACK_SECONDS * SAMPLE_RATE) * 2)
    for start_s, line in CALLER_TRACK:
        pcm = tts.synthesize(line)
        offset = int(start_s * SAMPLE_RATE) * 2
        track[offset : offset + len(pcm)] = pcm
    path = tmp_path_factory.mktemp("caller") / "caller.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(SAMPLE_RATE)
        wav.writeframes(bytes(track))
    return str(path)


def test_the_correction_scenario_passes_through_the_real_microphone_path(
    lab_server, caller_recording
):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                *CHROMIUM_ARGS,
                "--use-fake-ui-for-media-stream",
                "--use-fake-device-for-media-stream",
                f"--use-file-for-fake-audio-capture={caller_recording}",
                "--autoplay-policy=no-user-gesture-required",
            ],
        )
        page = browser.new_page()
        page.set_default_timeout(90000)
        page.goto(lab_server + "/")
        card = page.locator("#scenario-correction")
        card.locator("input[value=voice]").check()
        card.get_by_role("button", name="Start run").click()
        page.wait_for_url("**/runs/*/")
        page.get_by_role("button", name="Start the call").click()
        page.locator("#event-log li[data-type='agent.audio_started']").first.wait_for()
        page.locator("#mic-start").click()
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
