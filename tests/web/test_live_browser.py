"""The run page under a person's habits: reload mid-run, a second tab, Back and Forward."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.test_browser import start_run

pytestmark = pytest.mark.browser


def say(page, text: str) -> None:
    page.locator("#say-text").fill(text)
    page.get_by_role("button", name="Send").click()


def test_a_reload_resumes_the_run_and_a_second_tab_watches_it_live(browser_page, lab_server):
    page = browser_page
    start_run(page, lab_server, "correction")
    expect(page.locator("#controls")).to_have_attribute("data-role", "driver")
    say(page, "I'd like an appointment on Tuesday morning.")
    expect(page.locator("#transcript")).to_contain_text("Shall I book it?")

    page.reload()
    expect(page.locator("#controls")).to_have_attribute("data-role", "driver")
    expect(page.locator("#transcript")).to_contain_text("Shall I book it?")
    expect(page.locator("#verdict")).to_contain_text("run in progress")

    # Another tab of the same browser: the same session cookie.
    tab = page.context.browser.new_context(storage_state=page.context.storage_state())
    second = tab.new_page()
    second.goto(page.url)
    expect(second.locator("#role-line")).to_have_text("Watching: another window drives this run.")
    expect(second.locator("#say-text")).to_be_disabled()
    expect(second.locator("#transcript")).to_contain_text("Shall I book it?")
    say(page, "Actually, make that Friday afternoon.")
    expect(second.locator("#transcript")).to_contain_text("Friday at 2:30 PM")

    page.get_by_role("button", name="End the call").click()
    for tab in (page, second):
        expect(tab.locator("#verdict")).to_have_attribute("data-final", "true")
        expect(tab.locator("#controls")).to_have_text("This run has ended. Start another.")
        expect(tab.locator("#verdict")).not_to_contain_text("run in progress")
    events = page.request.get(page.url + "events.json").json()["events"]
    ended = [e["payload"] for e in events if e["payload"]["type"] == "run.ended"]
    assert [e["reason_kind"] for e in ended] == ["completed"]

    # Back then Forward must not bring back the live page from the browser's memory.
    page.go_back()
    page.go_forward()
    expect(page.locator("#controls")).to_have_attribute("data-role", "ended")
    assert page.locator("[ws-connect]").count() == 0
