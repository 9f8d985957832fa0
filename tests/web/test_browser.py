from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def start_run(page, base_url: str, scenario_id: str, *, unguarded: bool = False) -> None:
    page.goto(base_url + "/")
    card = page.locator(f"#scenario-{scenario_id}")
    if unguarded:
        card.locator("input[name=unguarded]").check()
    card.get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    # The greeting arrives once the socket drives the run; a click before that may go unheard.
    page.locator("#transcript .turn.agent").first.wait_for()


def test_the_page_runs_the_correction_scenario_live_to_a_pass(browser_page, lab_server):
    page = browser_page
    start_run(page, lab_server, "correction")
    page.get_by_role("button", name="Play the scripted caller").click()
    verdict = page.locator('#verdict[data-final="true"]')
    verdict.wait_for()
    assert verdict.get_attribute("data-verdict") == "PASS"
    transcript = page.locator("#transcript").inner_text()
    assert "Actually, make that Thursday afternoon." in transcript
    assert "Thursday at 2:00 PM" in transcript
    assert page.locator(".decision.allow").count() >= 3
    assert page.locator(".assertion.supported").count() == 4


def test_the_page_shows_fail_with_contradicting_events_when_unguarded(browser_page, lab_server):
    page = browser_page
    start_run(page, lab_server, "correction", unguarded=True)
    assert page.locator(".warning", has_text="Unguarded mode").is_visible()
    page.get_by_role("button", name="Play the scripted caller").click()
    verdict = page.locator('#verdict[data-final="true"]')
    verdict.wait_for()
    assert verdict.get_attribute("data-verdict") == "FAIL"
    assert page.locator(".assertion.contradicted .contra a").count() >= 1


def test_typed_input_reaches_the_agent_and_the_gate(browser_page, lab_server):
    page = browser_page
    start_run(page, lab_server, "no_confirmation")
    page.locator("#say-text").fill("Yes, book it.")
    page.get_by_role("button", name="Send").click()
    page.locator(".decision.block", has_text="no_proposal").wait_for()
    assert page.locator("#say-text").input_value() == ""
    page.get_by_role("button", name="End the call").click()
    page.locator('#verdict[data-final="true"]').wait_for()
    assert page.locator("#verdict").get_attribute("data-verdict") == "INCONCLUSIVE"
