"""The queue in a real browser: a flag uploaded in one tab appears live in two members' queues,
a refused action says why on its card, and an acknowledgement redraws the card for both."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest

from tests.audit.calls import jsonl
from tests.conftest import ROOT
from tests.operator.conftest import one_call

pytestmark = pytest.mark.browser
PASSWORD = "queue-browser-test-password"


@pytest.fixture
def create_member(lab_server, tmp_path_factory):
    """createuser against the lab server's database (the one lab-server folder of the session)."""
    (state,) = tmp_path_factory.getbasetemp().glob("lab-server[0-9]*")
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{state / 'db.sqlite3'}"}

    def create(username: str, role: str) -> None:
        for args, stdin in (
            (["createtenant", "demo"], ""),
            (
                ["createuser", username, "--tenant", "demo", "--role", role, "--password-stdin"],
                PASSWORD + "\n",
            ),
        ):
            subprocess.run(
                [sys.executable, "manage.py", *args],
                cwd=ROOT,
                env=env,
                input=stdin,
                text=True,
                capture_output=True,
                check=args[0] == "createuser",
            )

    return create


def sign_in(page, base: str, username: str) -> None:
    page.goto(f"{base}/t/demo/queue/")
    page.wait_for_url("**/accounts/login/**")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.wait_for_url("**/t/demo/queue/")
    page.locator('#queue[data-live="true"]').wait_for()


def test_a_flag_reaches_two_queues_live_and_each_action_shows_on_both(
    browser_page, lab_server, create_member
):
    suffix = uuid.uuid4().hex[:8]
    first, second = f"q-op-{suffix}", f"q-admin-{suffix}"
    create_member(first, "operator")
    create_member(second, "admin")
    page = browser_page
    sign_in(page, lab_server, first)
    other = page.context.browser.new_context().new_page()
    sign_in(other, lab_server, second)
    call = f"browser-{suffix}"
    # Signed in as the operator: only a member who may act stores a graded call in the tenant.
    upload = page.context.browser.new_context().new_page()
    sign_in(upload, lab_server, first)
    upload.goto(f"{lab_server}/grade/")
    upload.set_input_files(
        "#transcript-file",
        {"name": "call.jsonl", "mimeType": "application/json", "buffer": jsonl(one_call(call))},
    )
    upload.click("#grade-form button[type=submit]")
    upload.locator("#grade-summary").wait_for()
    for queue in (page, other):
        queue.locator(".queue-card", has_text=call).wait_for()
    card = page.locator(".queue-card", has_text=call)
    assert card.locator(".flagged-turn").inner_text().endswith("A wheel truing is $45.00.")
    # Spaces pass the browser's `required`; the server refuses them and the card says why.
    card.locator("form.override textarea").fill("   ")
    card.locator("form.override button").click()
    page.locator(".queue-card .case-message", has_text="an override needs a note").wait_for()
    page.locator(".queue-card", has_text=call).locator("form.acknowledge button").click()
    page.locator('.queue-card[data-state="acknowledged"]', has_text=call).wait_for()
    mirrored = other.locator('.queue-card[data-state="acknowledged"]', has_text=call)
    mirrored.wait_for()
    assert f"{first} acknowledge" in mirrored.inner_text()
    assert mirrored.locator("form").count() == 0
