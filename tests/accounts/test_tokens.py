"""API tokens: shown once, kept only as a digest, revocable."""

from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth.models import AnonymousUser, User

from lab.accounts.access import (
    issue_token,
    membership,
    revoke_token,
    role_in,
    user_for_token,
)
from lab.accounts.models import ApiToken, Membership, Tenant
from lab.accounts.roles import Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice() -> User:
    return User.objects.create_user("alice", password="pw-alice-1234")


def test_only_the_digest_is_stored(alice):
    raw = issue_token(alice, name="ci")
    stored = ApiToken.objects.get(user=alice)
    assert stored.digest == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in {stored.digest, stored.prefix, stored.name}
    assert raw.startswith(stored.prefix) and len(stored.prefix) == 12
    assert stored.name == "ci"


def test_each_issue_is_a_new_token(alice):
    assert issue_token(alice) != issue_token(alice)
    assert ApiToken.objects.filter(user=alice).count() == 2


def test_a_token_finds_its_user_and_records_the_use(alice):
    raw = issue_token(alice)
    assert ApiToken.objects.get().last_used_at is None
    assert user_for_token(raw) == alice
    assert ApiToken.objects.get().last_used_at is not None


@pytest.mark.parametrize("raw", ["", "vrl_nope", "x" * 5000])
def test_unknown_tokens_find_nobody(alice, raw):
    issue_token(alice)
    assert user_for_token(raw) is None


def test_a_revoked_token_finds_nobody(alice):
    raw = issue_token(alice)
    revoked = revoke_token(raw[:12])
    assert revoked.revoked_at is not None
    assert user_for_token(raw) is None


def test_an_inactive_users_token_finds_nobody(alice):
    raw = issue_token(alice)
    alice.is_active = False
    alice.save()
    assert user_for_token(raw) is None


def test_revoke_refuses_an_unknown_or_ambiguous_prefix(alice):
    raw = issue_token(alice)
    with pytest.raises(LookupError, match="no live token"):
        revoke_token("vrl_zzzzzzzz")
    with pytest.raises(LookupError, match="no live token"):
        revoke_token("   ")
    issue_token(alice)
    with pytest.raises(LookupError, match="more than one"):
        revoke_token("vrl_")
    assert user_for_token(raw) == alice


def test_revoke_for_a_user_leaves_other_users_tokens(alice):
    bob = User.objects.create_user("bob")
    raw = issue_token(bob)
    with pytest.raises(LookupError):
        revoke_token(raw[:12], user=alice)
    assert user_for_token(raw) == bob


def test_membership_and_role(alice):
    demo = Tenant.objects.create(slug="demo")
    Tenant.objects.create(slug="other")
    Membership.objects.create(user=alice, tenant=demo, role=Role.OPERATOR)
    assert role_in(alice, "demo") is Role.OPERATOR
    assert membership(alice, "demo").tenant == demo
    assert role_in(alice, "other") is None
    assert role_in(alice, "missing") is None
    assert role_in(AnonymousUser(), "demo") is None
    assert role_in(None, "demo") is None
    alice.is_active = False
    alice.save()
    assert role_in(alice, "demo") is None
