"""Audio from the first word: "Start the call" unlocks audio before the greeting is sent."""

from __future__ import annotations

import pytest

from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = [pytest.mark.browser, pytest.mark.models]


def test_the_greeting_is_heard_once_start_the_call_unlocks_audio(lab_server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # The browser's own autoplay rule, stated: sound only after a click on the page.
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[*CHROMIUM_ARGS, "--autoplay-policy=document-user-activation-required"],
        )
        page = browser.new_page()
        page.set_default_timeout(90000)
        page.goto(lab_server + "/")
        card = page.locator("#scenario-correction")
        card.locator("input[value=voice]").check()
        card.get_by_role("button", name="Start run").click()
        page.wait_for_url("**/runs/*/")
        # Nothing is connected (so nothing greets) before the click.
        assert page.evaluate("window.labVoice.socketOpen") is False
        page.get_by_role("button", name="Start the call").click()
        page.locator("#event-log li[data-type='agent.audio_played']").first.wait_for()
        reports = page.evaluate("window.labVoice.reports")
        audio = page.evaluate("window.labVoice.audio")
        first_event = page.locator("#event-log li").first.inner_text()
        browser.close()
    assert "run.started" in first_event
    greeting = reports[0]
    assert audio == "running"
    assert greeting["played_ms"] > 0
    assert greeting["played_ms"] == greeting["total_ms"]
