"""Under the lab's Content-Security-Policy the page still works in Chromium: htmx and its
WebSocket extension drive a run, the audio worklets load, and inline script is blocked."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(`${event.violatedDirective} ${event.blockedURI}`);
});
"""
LOAD_WORKLETS = """async () => {
  const ctx = new AudioContext();
  for (const file of ["resample-kernel.js", "mic-worklet.js", "player-worklet.js"]) {
    await ctx.audioWorklet.addModule(`/static/js/${file}`);
  }
  let foreign = "loaded";
  try {
    await ctx.audioWorklet.addModule("data:text/javascript,0");
  } catch (error) {
    foreign = "refused";
  }
  await ctx.close();
  return foreign;
}"""
INJECT_INLINE = """() => {
  const script = document.createElement("script");
  script.textContent = "window.__inline = 1";
  document.head.append(script);
  return window.__inline === undefined;
}"""


def test_a_run_plays_to_its_verdict_with_no_policy_violation(browser_page, lab_server):
    page = browser_page
    page.add_init_script(RECORD_VIOLATIONS)
    response = page.goto(lab_server + "/")
    assert response is not None
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.locator("#scenario-correction").get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    page.get_by_role("button", name="Play the scripted caller").click()
    verdict = page.locator('#verdict[data-final="true"]')
    verdict.wait_for()
    assert verdict.get_attribute("data-verdict") == "PASS"
    assert page.evaluate("window.__violations") == []


def test_the_worklets_load_and_anything_inline_or_foreign_is_refused(browser_page, lab_server):
    page = browser_page
    page.add_init_script(RECORD_VIOLATIONS)
    page.goto(lab_server + "/reports/import/")
    assert page.evaluate(LOAD_WORKLETS) == "refused"
    assert page.evaluate(INJECT_INLINE)
    violations = page.evaluate("window.__violations")
    assert any(v.startswith("script-src") for v in violations), violations
