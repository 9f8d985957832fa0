from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_a_report_downloaded_from_the_run_page_imports_and_replays_in_chromium(
    browser_page, lab_server, tmp_path
):
    page = browser_page
    page.goto(lab_server + "/")
    page.locator("#scenario-correction").get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    page.get_by_role("button", name="Play the scripted caller").click()
    page.locator('#verdict[data-final="true"]').wait_for()

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download evidence report").click()
    report = tmp_path / download_info.value.suggested_filename
    download_info.value.save_as(report)

    page.goto(lab_server + "/")
    page.get_by_role("link", name="Import a report").click()
    page.wait_for_url("**/reports/import/")
    page.locator("#report-file").set_input_files(report)
    page.get_by_role("button", name="Check the report").click()
    derived = page.locator("#derived-verdict")
    derived.wait_for()
    assert derived.get_attribute("data-verdict") == "PASS"
    summary = page.locator("#summary").inner_text()
    assert summary == f"{report.name}: consistent, signed by this lab, verdict PASS"
    assert page.locator('#checks > li[data-status="ok"]').count() == 6

    page.get_by_role("link", name="Replay this report event by event").click()
    page.wait_for_url("**/replay/")
    events = page.locator("#event-log li").count()
    assert events > 20
    page.get_by_role("button", name="Back to the start").click()
    assert page.locator("#replay-position").inner_text() == f"event 0 of {events}"
    assert page.locator("#event-log li").count() == 0
    assert page.locator("#verdict").get_attribute("data-verdict") == "INCONCLUSIVE"
    # run.started, the greeting, its grade and grounding audit, then the caller's request.
    for _ in range(5):
        page.get_by_role("button", name="Step").click()
    assert page.locator("#event-log li").count() == 5
    assert page.locator("#transcript .turn").count() == 2  # the greeting and the caller's request
    assert page.locator("#event-log li.current").get_attribute("id") == "ev-00005"
    page.get_by_role("button", name="Show all").click()
    assert page.locator("#replay-position").inner_text() == f"event {events} of {events}"
    assert page.locator("#event-log li").count() == events
    assert page.locator('#verdict[data-final="true"]').get_attribute("data-verdict") == "PASS"
    assert page.locator(".checklist .assertion.supported").count() == 4
