"""Sign in, sign out and the API tokens page."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lab.accounts.access import issue_token, user_for_token
from lab.accounts.models import ApiToken

pytestmark = pytest.mark.django_db
PASSWORD = "pw-alice-1234"


@pytest.fixture
def alice() -> User:
    return User.objects.create_user("alice", password=PASSWORD)


@pytest.fixture
def signed_in(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def test_the_header_offers_sign_in_then_names_the_user(client, alice):
    page = client.get("/").content.decode()
    assert 'id="sign-in"' in page and "alice" not in page
    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/"
    page = client.get("/").content.decode()
    assert ">alice</a>" in page and 'id="sign-out"' in page


def test_a_wrong_password_is_told_plainly(client, alice):
    response = client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert response.status_code == 200
    assert 'id="login-error"' in response.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize(
    "form",
    [{}, {"username": "x" * 5000, "password": "y"}, {"username": "\x00", "password": "\x00"}],
)
def test_malformed_sign_in_is_a_form_error_not_a_crash(client, form):
    response = client.post("/accounts/login/", form)
    assert response.status_code in {200, 400}
    assert "_auth_user_id" not in client.session


def test_sign_in_needs_the_csrf_token(alice):
    strict = Client(enforce_csrf_checks=True)
    response = strict.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 403


def test_sign_in_does_not_redirect_off_site(client, alice):
    response = client.post(
        "/accounts/login/",
        {"username": "alice", "password": PASSWORD, "next": "https://evil.example/"},
    )
    assert response["Location"] == "/"


def test_sign_out_is_a_post_and_ends_the_session(signed_in):
    assert signed_in.get("/accounts/logout/").status_code == 405
    assert signed_in.post("/accounts/logout/").status_code == 302
    assert 'id="sign-in"' in signed_in.get("/").content.decode()


def test_the_tokens_page_needs_a_sign_in(client):
    response = client.get("/accounts/tokens/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=/accounts/tokens/")
    assert client.post("/accounts/tokens/", {"name": "x"}).status_code == 302
    assert not ApiToken.objects.exists()


def test_a_new_token_is_shown_once_and_works(signed_in, alice):
    page = signed_in.post("/accounts/tokens/", {"name": "ci"})
    assert "no-store" in page["Cache-Control"]
    raw = re.search(r'id="new-token">([^<]+)<', page.content.decode()).group(1)
    listing = signed_in.get("/accounts/tokens/").content.decode()
    assert raw not in listing
    assert raw[:12] in listing and "<strong>ci</strong>" in listing and "never used" in listing
    assert user_for_token(raw) == alice
    assert "last used" in signed_in.get("/accounts/tokens/").content.decode()


def test_a_too_long_token_name_is_refused(signed_in):
    response = signed_in.post("/accounts/tokens/", {"name": "n" * 101})
    assert response.status_code == 400
    assert "at most 100" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_revoking_from_the_page(signed_in, alice):
    raw = issue_token(alice)
    assert signed_in.post("/accounts/tokens/revoke/", {"prefix": raw[:12]}).status_code == 302
    assert user_for_token(raw) is None
    assert "revoked" in signed_in.get("/accounts/tokens/").content.decode()


@pytest.mark.parametrize("prefix", ["", "vrl_nothere", "x" * 5000])
def test_revoking_nothing_is_a_clear_404(signed_in, prefix):
    response = signed_in.post("/accounts/tokens/revoke/", {"prefix": prefix})
    assert response.status_code == 404
    assert "no live token of yours" in response.content.decode()


def test_another_users_token_can_be_neither_seen_nor_revoked(signed_in):
    bob = User.objects.create_user("bob")
    raw = issue_token(bob, name="bobs")
    assert raw[:12] not in signed_in.get("/accounts/tokens/").content.decode()
    assert signed_in.post("/accounts/tokens/revoke/", {"prefix": raw[:12]}).status_code == 404
    assert user_for_token(raw) == bob
