"""Setting up tenants, users and tokens from a shell: clear errors, never a traceback."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from lab.accounts.access import role_in, user_for_token
from lab.accounts.models import Agent, ApiToken, Membership, Tenant

pytestmark = pytest.mark.django_db


def run(*args: str, stdin: str | None = None, monkeypatch=None) -> str:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_createtenant_creates_once():
    assert "created" in run("createtenant", "acme", "--name", "Acme Ltd")
    assert Tenant.objects.get(slug="acme").name == "Acme Ltd"
    again = run("createtenant", "acme", "--name", "Other")
    assert "already exists" in again
    assert Tenant.objects.get(slug="acme").name == "Acme Ltd"
    assert Membership.objects.count() == 0 and Agent.objects.count() == 0


@pytest.mark.parametrize("slug", ["has space", "ümlaut!", "a/b", "x" * 65, ""])
def test_createtenant_refuses_a_bad_slug(slug):
    with pytest.raises(CommandError, match=r"slug|longer than 64"):
        run("createtenant", slug)
    assert not Tenant.objects.exists()


def test_createuser_prints_a_generated_password_once_that_logs_in():
    run("createtenant", "acme")
    out = run("createuser", "alice", "--tenant", "acme", "--role", "Operator")
    password = re.search(r"password \(shown once\): (\S+)", out).group(1)
    alice = authenticate(username="alice", password=password)
    assert alice is not None
    assert role_in(alice, "acme") == "operator"


def test_createuser_reads_the_password_from_stdin(monkeypatch):
    run("createtenant", "acme")
    out = run(
        "createuser", "bob", "--tenant", "acme", "--role", "viewer", "--password-stdin",
        stdin="correct horse battery\n", monkeypatch=monkeypatch,
    )  # fmt: skip
    assert "correct horse" not in out and "password" not in out
    assert authenticate(username="bob", password="correct horse battery") is not None


def test_createuser_on_an_existing_user_changes_the_role_and_keeps_the_password(monkeypatch):
    run("createtenant", "acme")
    run("createtenant", "beta")
    run(
        "createuser", "bob", "--tenant", "acme", "--role", "viewer", "--password-stdin",
        stdin="first-password\n", monkeypatch=monkeypatch,
    )  # fmt: skip
    out = run("createuser", "bob", "--tenant", "acme", "--role", "admin")
    run("createuser", "bob", "--tenant", "beta", "--role", "owner")
    assert "updated" in out and "password" not in out
    bob = authenticate(username="bob", password="first-password")
    assert (role_in(bob, "acme"), role_in(bob, "beta")) == ("admin", "owner")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["alice", "--tenant", "nope", "--role", "owner"], "no tenant 'nope'"),
        (["alice", "--tenant", "acme", "--role", "boss"], "owner, admin, operator, viewer"),
        (["bad name!", "--tenant", "acme", "--role", "owner"], "may hold only"),
        (["x" * 151, "--tenant", "acme", "--role", "owner"], "1 to 150"),
    ],
)
def test_createuser_refuses_bad_input_and_creates_nobody(args, message):
    run("createtenant", "acme")
    with pytest.raises(CommandError, match=message):
        run("createuser", *args)
    assert not User.objects.exists()


def test_createuser_refuses_a_short_stdin_password(monkeypatch):
    run("createtenant", "acme")
    with pytest.raises(CommandError, match="at least 8"):
        run(
            "createuser", "bob", "--tenant", "acme", "--role", "owner", "--password-stdin",
            stdin="", monkeypatch=monkeypatch,
        )  # fmt: skip
    assert not User.objects.exists()


def test_createtoken_prints_only_the_token_and_revoketoken_ends_it():
    User.objects.create_user("alice")
    out = run("createtoken", "alice", "--name", "ci")
    assert out.count("\n") == 1
    raw = out.strip()
    assert user_for_token(raw).username == "alice"
    assert ApiToken.objects.get().name == "ci"
    assert "revoked" in run("revoketoken", raw[:12])
    assert user_for_token(raw) is None
    with pytest.raises(CommandError, match="no live token"):
        run("revoketoken", raw[:12])


def test_createtoken_refuses_an_unknown_user_or_a_long_name():
    with pytest.raises(CommandError, match="no user 'ghost'"):
        run("createtoken", "ghost")
    User.objects.create_user("alice")
    with pytest.raises(CommandError, match="at most 100"):
        run("createtoken", "alice", "--name", "n" * 101)
    assert not ApiToken.objects.exists()


def test_createtenant_refuses_a_long_name():
    with pytest.raises(CommandError, match="at most 200"):
        run("createtenant", "acme", "--name", "n" * 201)
    assert not Tenant.objects.exists()


LOGIN = r"Demo login: http://127\.0\.0\.1:8000/accounts/login/ user demo, password (\S+)\n"


def test_seeddemo_keeps_the_password_across_restarts_unless_asked(settings, tmp_path):
    settings.LAB_STATE_DIR = tmp_path
    first, again = run("seeddemo"), run("seeddemo")
    found = re.fullmatch(LOGIN, first)
    assert found, first
    password = found.group(1)
    # A restart keeps the login, so browsers signed in as demo stay signed in.
    kept = re.match(LOGIN, again)
    assert kept and kept.group(1) == password and "kept from the last start" in again
    assert (tmp_path / "demo-login").stat().st_mode & 0o077 == 0
    renewed = re.fullmatch(LOGIN, run("seeddemo", "--new-password"))
    assert renewed and renewed.group(1) != password
    assert authenticate(username="demo", password=password) is None
    demo = authenticate(username="demo", password=renewed.group(1))
    assert role_in(demo, "demo") == "owner"
    # A saved password that no longer signs in (changed elsewhere) is replaced.
    (tmp_path / "demo-login").write_text("stale-one\n")
    fresh = re.fullmatch(LOGIN, run("seeddemo"))
    assert fresh and fresh.group(1) != "stale-one"
    assert authenticate(username="demo", password=fresh.group(1)) is not None
    assert list(Agent.objects.values_list("tenant__slug", "slug")) == [("demo", "demo-agent")]
    assert (Tenant.objects.count(), Membership.objects.count(), User.objects.count()) == (1, 1, 1)
