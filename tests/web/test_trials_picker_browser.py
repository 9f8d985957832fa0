"""The picker's repeat count in a real browser against daphne: it fits on one line at desktop
and phone width, and "play it 3 times" leads to a trials page that shows its progress, then
polls no more once every trial has finished."""

from __future__ import annotations

import uuid

import pytest

from tests.operator.test_queue_browser import create_member, sign_in  # noqa: F401 (fixture)
from tests.web.test_layout_browser import WIDTHS, assert_labels_fit

pytestmark = pytest.mark.browser
PICKER_LABELS = "#scenario-correction form label, #scenario-correction form button"


def test_three_repeats_from_the_picker_show_progress_then_the_pass_rate(
    browser_page,
    lab_server,
    create_member,  # noqa: F811
):
    page = browser_page
    username = f"repeat-{uuid.uuid4().hex[:8]}"
    create_member(username, "owner")
    sign_in(page, lab_server, username)
    page.goto(lab_server + "/")
    for width in WIDTHS:
        assert_labels_fit(page, PICKER_LABELS, "picker", width)
    card = page.locator("#scenario-correction")
    card.get_by_label("play it").fill("3")
    card.get_by_role("button", name="Start run").click()
    page.wait_for_url("**/trials/*/")
    # The first trial plays for seconds after the redirect: the page opens on its progress.
    assert (
        page.locator("#trials-progress")
        .inner_text()
        .endswith("the pass rates and their intervals come once every trial has. Refresh")
    )
    assert " of 3" in page.locator("#trials-progress strong").inner_text()
    page.locator('#trials[data-done="true"]').wait_for(timeout=180_000)
    assert page.locator("#trials-progress").count() == 0
    assert page.locator("#trials").get_attribute("hx-trigger") is None
    verdicts = page.locator("td.trial").evaluate_all("cells => cells.map(c => c.dataset.verdict)")
    assert verdicts == ["PASS"] * 3
    assert page.locator("td.pass-rate").inner_text() == "3/3"
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        assert page.locator("#trials-summary").is_visible()
