"""Sign-in and API tokens are throttled per account and per client address: past the limit even
a correct password or a live token is refused (429, Retry-After) until the cool-off has passed."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lab.accounts.access import issue_token

pytestmark = pytest.mark.django_db
PASSWORD = "pw-alice-1234"
API = "/api/agents/demo-agent/grader-verdicts"


@pytest.fixture
def alice() -> User:
    return User.objects.create_user("alice", password=PASSWORD)


def sign_in(client: Client, password: str, username: str = "alice", address: str = "10.0.0.1"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_the_31st_attempt_correct_after_30_wrong_is_refused_then_let_in_after_the_cool_off(
    alice, settings, caplog
):
    client = Client()
    caplog.set_level(logging.INFO, logger="lab")
    for _ in range(30):
        assert sign_in(client, "wrong-password").status_code in (200, 429)
    refused = sign_in(client, PASSWORD)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    page = refused.content.decode()
    assert 'id="login-locked"' in page and "Too many failed sign-ins" in page
    assert "_auth_user_id" not in client.session
    assert any("sign-in refused while locked" in r.getMessage() for r in caplog.records)
    assert any("sign-in failed: account='alice'" in r.getMessage() for r in caplog.records)
    settings.LAB_THROTTLE_COOLOFF_S = 0
    assert sign_in(client, PASSWORD).status_code == 302
    assert client.session["_auth_user_id"] == str(alice.pk)


def test_an_account_is_locked_from_every_address(alice, settings):
    settings.LAB_SIGNIN_ACCOUNT_LIMIT = 3
    for n in range(3):
        sign_in(Client(), "wrong-password", address=f"10.0.1.{n}")
    assert sign_in(Client(), PASSWORD, address="10.0.9.9").status_code == 429


def test_an_address_is_locked_for_every_account(alice, settings):
    settings.LAB_SIGNIN_ADDRESS_LIMIT = 4
    for n in range(4):
        sign_in(Client(), "wrong-password", username=f"guess{n}")
    assert sign_in(Client(), PASSWORD).status_code == 429
    # Another address still signs alice in: the lock is the address's, not hers.
    assert sign_in(Client(), PASSWORD, address="10.0.2.2").status_code == 302


def test_a_correct_sign_in_below_the_limit_clears_the_accounts_count(alice, settings):
    settings.LAB_SIGNIN_ACCOUNT_LIMIT = 3
    for _ in range(2):
        sign_in(Client(), "wrong-password")
    assert sign_in(Client(), PASSWORD).status_code == 302
    for _ in range(2):
        sign_in(Client(), "wrong-password", address="10.0.3.3")
    assert sign_in(Client(), PASSWORD, address="10.0.3.4").status_code == 302


def test_a_bad_token_flood_is_refused_as_a_problem_with_retry_after(alice, settings, caplog):
    settings.LAB_API_ADDRESS_LIMIT = 5
    good = {"Authorization": f"Bearer {issue_token(alice)}"}
    client = Client(REMOTE_ADDR="10.0.4.4")
    statuses = [
        client.get(API, headers={"Authorization": f"Bearer vrl_wrong{n}"}).status_code
        for n in range(8)
    ]
    assert statuses == [401] * 5 + [429] * 3
    refused = client.get(API, headers=good)
    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/problem+json"
    assert refused.json()["code"] == "too_many_requests"
    assert int(refused["Retry-After"]) > 0
    assert any("api token refused while locked" in r.getMessage() for r in caplog.records)
    # Other addresses are not held back, and the lock ends with the cool-off.
    assert Client(REMOTE_ADDR="10.0.4.5").get(API, headers=good).status_code != 429
    settings.LAB_THROTTLE_COOLOFF_S = 0
    assert client.get(API, headers=good).status_code != 429
