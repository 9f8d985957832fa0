"""Pages a newcomer meets, at desktop and phone width: no label wraps or overlaps another
(the run page, the flag queue, the waterfall), and a finished call ends in one calm state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from lab.reports.export import report_bytes
from lab.reports.services import report_for_run
from tests.audit.calls import jsonl
from tests.conftest import ROOT
from tests.operator.conftest import one_call
from tests.operator.test_queue_browser import create_member, sign_in  # noqa: F401 (fixture)
from tests.web.test_waterfall import finished_voice_run  # noqa: F401 (fixture)

pytestmark = pytest.mark.browser
WIDTHS = (1280, 390)
# Where the screenshots go, to look at: LAB_SCREENSHOTS, else the system's temporary folder.
SHOTS = Path(os.environ.get("LAB_SCREENSHOTS", tempfile.gettempdir())) / "lab-layout"

# Every label box on the page: its text, whether it wraps (taller than about one line, or cut
# off), and the boxes it overlaps (an element and its own descendants excepted).
LABEL_CHECK = """(selector) => {
  const nodes = [...document.querySelectorAll(selector)].filter((n) => {
    const r = n.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(n).visibility !== "hidden";
  });
  const boxes = nodes.map((n) => {
    const style = getComputedStyle(n);
    const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.25;
    const r = n.getBoundingClientRect();
    const pad = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom)
      + parseFloat(style.borderTopWidth) + parseFloat(style.borderBottomWidth);
    return { n, r, text: n.textContent.trim().slice(0, 40),
      wraps: r.height - pad > line * 1.5 || n.scrollWidth > n.clientWidth + 1 };
  });
  const wrapped = boxes.filter((b) => b.wraps).map((b) => b.text);
  const overlaps = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.n.contains(b.n) || b.n.contains(a.n)) continue;
      const x = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
      const y = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
      if (x > 1 && y > 1) overlaps.push([a.text, b.text]);
    }
  }
  return { count: boxes.length, wrapped, overlaps };
}"""

RUN_LABELS = "button, label, .badge, .turn .who, .console-tenant a, nav.account a"
QUEUE_LABELS = "button, .queue-filters label, .badge, .case-state, .console-tenant a, nav.account a"
WATERFALL_LABELS = ".bar-label, .tick"


def assert_labels_fit(page, selector: str, name: str, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
    found = page.evaluate(LABEL_CHECK, selector)
    assert found["count"] > 0, f"{name} at {width} px: no labels found"
    assert found["wrapped"] == [], f"{name} at {width} px: wrapped {found['wrapped']}"
    assert found["overlaps"] == [], f"{name} at {width} px: overlapping {found['overlaps']}"


def test_the_run_page_and_the_queue_keep_every_label_on_one_line(
    browser_page,
    lab_server,
    create_member,  # noqa: F811
):
    page = browser_page
    username = f"layout-{uuid.uuid4().hex[:8]}"
    create_member(username, "owner")
    sign_in(page, lab_server, username)
    # Signed in as the owner: only a member who may act stores a graded call in the tenant.
    upload = page.context.browser.new_context().new_page()
    sign_in(upload, lab_server, username)
    upload.goto(f"{lab_server}/grade/")
    upload.set_input_files(
        "#transcript-file",
        {"name": "c.jsonl", "mimeType": "application/json", "buffer": jsonl(one_call(username))},
    )
    upload.click("#grade-form button[type=submit]")
    upload.locator("#grade-summary").wait_for()
    page.reload()
    page.locator(".queue-card", has_text=username).first.wait_for()
    for width in WIDTHS:
        assert_labels_fit(page, QUEUE_LABELS, "queue", width)

    page.goto(lab_server + "/")
    page.locator("#scenario-correction").get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    page.locator("#transcript .turn.agent").first.wait_for()
    for width in WIDTHS:
        assert_labels_fit(page, RUN_LABELS, "run", width)


@pytest.fixture
def voice_report(db, finished_voice_run, tmp_path) -> Path:  # noqa: F811
    """A voice run's report, written before the browser starts (its event loop forbids the ORM)."""
    report = tmp_path / "voice-report.json"
    report.write_bytes(report_bytes(report_for_run(finished_voice_run)))
    return report


def test_the_waterfall_keeps_its_axis_and_labels_apart_at_every_width(
    voice_report, browser_page, lab_server
):
    report = voice_report
    page = browser_page
    page.goto(lab_server + "/reports/import/")
    page.locator("#report-file").set_input_files(report)
    page.get_by_role("button", name="Check the report").click()
    page.locator("#report-latency .waterfall").first.wait_for()
    assert page.locator("#report-latency .tick").count() >= 2
    for width in WIDTHS:
        assert_labels_fit(page, WATERFALL_LABELS, "waterfall", width)
        page.locator("#report-latency").screenshot(path=str(SHOTS / f"waterfall-box-{width}.png"))
        # Every bar stays inside its track, the axis included.
        outside = page.evaluate(
            """() => [...document.querySelectorAll('.bar, .tick')].filter((n) => {
                const track = n.closest('.bar-track').getBoundingClientRect();
                const r = n.getBoundingClientRect();
                return r.left < track.left - 1 || r.right > track.right + 24;
              }).length"""
        )
        assert outside == 0


# What the say box said after each socket message, read by the page itself (no timing race).
RECORD_SAY_BOX = """
window.sayBox = [];
document.addEventListener("htmx:wsAfterMessage", () => setTimeout(() => {
  const state = document.getElementById("agent-state");
  const box = document.getElementById("say-text");
  if (!state || !box) return;
  window.sayBox.push([state.dataset.speaking, box.dataset.bargeIn, box.placeholder]);
}, 0));
"""


def test_a_call_that_simply_ended_ends_calmly(browser_page, lab_server):
    page = browser_page
    page.add_init_script(RECORD_SAY_BOX)
    page.goto(lab_server + "/")
    page.locator("#scenario-correction").get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    page.locator("#transcript .turn.agent").first.wait_for()
    page.get_by_role("button", name="Play the scripted caller").click()
    page.locator('#controls[data-role="ended"]').wait_for()
    page.locator('#run[data-ended="true"]').wait_for()
    assert page.locator('#verdict[data-final="true"]').get_attribute("data-verdict") == "PASS"
    # While the agent spoke, the say box said a line would interrupt it; when it listened, not.
    said = page.evaluate("window.sayBox")
    assert all(speaking == barge for speaking, barge, _ in said)
    assert any(s == "true" and "interrupts" in text for s, _, text in said)
    assert any(s == "false" and "interrupts" not in text for s, _, text in said)
    assert page.locator("#agent-state").is_hidden()
    assert page.locator("#notice").inner_text().strip() == ""
    assert page.locator("#controls").inner_text().strip() == "This run has ended. Start another."
    # A reload shows the same ended state.
    page.reload()
    assert page.locator("#controls").inner_text().strip() == "This run has ended. Start another."
    assert page.locator("#agent-state").count() == 0
    assert page.locator("#call-start, #say-text").count() == 0


PHONE = 390
# How wide the page is, laid out: wider than the viewport is a page that scrolls sideways.
PAGE_WIDTH = "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
# The innermost elements reaching past the viewport's right edge: what to fix on a wide page.
PAST_THE_EDGE = """() => [...document.querySelectorAll('body *')].filter((n) => {
  const past = (e) => e.getBoundingClientRect().right > window.innerWidth + 1;
  return past(n) && ![...n.children].some(past);
}).slice(0, 4).map((n) => `${n.tagName.toLowerCase()}#${n.id}.${n.className}`)"""


@pytest.fixture
def member_pages(
    lab_server,
    create_member,  # noqa: F811
    tmp_path,
    tmp_path_factory,
) -> tuple[str, dict[str, str], Path]:
    """An owner of demo, and in the server's database their voice run and demo's trials."""
    username = f"phone-{uuid.uuid4().hex[:8]}"
    create_member(username, "owner")
    (state,) = tmp_path_factory.getbasetemp().glob("lab-server[0-9]*")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{state / 'db.sqlite3'}"}
    report = tmp_path / "voice-report.json"
    seeded = subprocess.run(
        [sys.executable, "-m", "tests.web.member_pages", username, str(report)],
        cwd=ROOT,
        env={**env, "LAB_STATE_DIR": str(state), "LAB_TOOL_TIMEOUT_MS": "5000"},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return username, json.loads(seeded.stdout.strip().splitlines()[-1]), report


def test_no_page_a_signed_in_member_opens_scrolls_sideways_on_a_phone(
    browser_page, lab_server, member_pages
):
    username, seeded, report = member_pages
    page = browser_page
    page.set_viewport_size({"width": PHONE, "height": 844})
    sign_in(page, lab_server, username)
    upload = page.context.browser.new_context().new_page()
    sign_in(upload, lab_server, username)
    upload.goto(f"{lab_server}/grade/")
    upload.set_input_files(
        "#transcript-file",
        {"name": "c.jsonl", "mimeType": "application/json", "buffer": jsonl(one_call(username))},
    )
    upload.click("#grade-form button[type=submit]")
    upload.locator("#grade-summary").wait_for()

    widths: dict[str, int] = {}
    culprits: dict[str, list[str]] = {}

    def measure(name: str) -> None:
        page.wait_for_load_state("load")
        widths[name] = page.evaluate(PAGE_WIDTH)
        if widths[name] > PHONE:
            culprits[name] = page.evaluate(PAST_THE_EDGE)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"phone-{len(widths):02d}.png"), full_page=True)

    def visit(path: str) -> None:
        page.goto(lab_server + path)
        measure(path)

    for path in (
        "/",
        "/grade/",
        "/reports/import/",
        "/reports/keys/",
        "/accounts/tokens/",
        "/t/demo/queue/",
        "/t/demo/rollup/",
        "/t/demo/alerts/",
        "/t/demo/agents/",
        "/t/demo/agents/demo-agent/",
        "/t/demo/trials/",
        "/t/demo/compare/",
        seeded["trials"],
    ):
        visit(path)
    # The trials page is the last one opened: its first run link is the trial run to follow.
    trial_run = page.locator("a[href^='/t/demo/runs/']").first.get_attribute("href")
    visit(f"/runs/{seeded['voice_run']}/")
    page.get_by_role("button", name="Create a read-only share link").click()
    share = page.locator("#share-url")
    share.wait_for()
    measure("/runs/<voice run>/ with its share link")
    visit(share.inner_text().removeprefix(lab_server))
    page.goto(f"{lab_server}/t/demo/queue/")
    page.locator(".queue-card", has_text=username).first.wait_for()
    case = page.locator("a[href*='/queue/cases/']").first.get_attribute("href")
    call = page.locator("a[href^='/t/demo/calls/']").first.get_attribute("href")
    for path in (trial_run, case, call):
        assert path, "each page the check follows is linked"
        visit(path)
    page.goto(f"{lab_server}/reports/import/")
    page.locator("#report-file").set_input_files(report)
    page.get_by_role("button", name="Check the report").click()
    replay = page.locator("#replay-link").get_attribute("href")
    measure("/reports/<id>/")
    assert replay
    visit(replay)

    assert len(widths) >= 20
    wide = {name: width for name, width in widths.items() if width > PHONE}
    assert wide == {}, f"pages wider than {PHONE} px: {wide}; reaching past it: {culprits}"


def test_the_comparison_page_shows_the_agents_side_by_side_at_desktop_and_phone_width(
    browser_page, lab_server, member_pages
):
    username, _, _ = member_pages
    page = browser_page
    sign_in(page, lab_server, username)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{lab_server}/t/demo/compare/?channel=typed")
        page.locator(".agent-head").first.wait_for()
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"compare-{width}.png"), full_page=True)
        assert page.evaluate(PAGE_WIDTH) <= width, page.evaluate(PAST_THE_EDGE)
        head = page.locator(".agent-head").first.inner_text()
        assert "connector scripted" in head and "trials" in head
        cell = page.locator("tr[data-scenario='correction'] .compare-cell").first
        assert cell.locator(".interval").inner_text().startswith("[")
        assert page.locator("#compare-report").is_visible()
    both = page.locator(".agent-head").count()
    page.select_option("select[name=mode]", "guarded")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**mode=guarded**")
    # The seeded trials are all guarded: that filter keeps each of them, the other keeps none.
    heads = page.locator(".agent-head")
    assert heads.count() == both
    assert all(" unguarded " not in f" {text} " for text in heads.all_inner_texts())
    page.select_option("select[name=mode]", "unguarded")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**mode=unguarded**")
    assert page.locator(".agent-head").count() == 0
