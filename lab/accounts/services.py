"""Setting up tenants, members and the demo from a shell: every refusal is a ValueError."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction

from lab.accounts.models import Agent, Membership, Tenant
from lab.accounts.roles import Role, role_parse

DEMO_TENANT = "demo"
DEMO_AGENT = "demo-agent"
DEMO_USER = "demo"
MIN_PASSWORD = 8


def slug_check(slug: str, what: str = "tenant slug") -> str:
    """The slug itself, or a ValueError saying what a slug may hold."""
    try:
        validate_slug(slug)
    except ValidationError:
        raise ValueError(
            f"{what} {slug!r} is not a slug: use letters, digits, '-' or '_' only"
        ) from None
    if len(slug) > 64:
        raise ValueError(f"{what} {slug[:20]!r}… is longer than 64 characters")
    return slug


def password_new() -> str:
    return secrets.token_urlsafe(12)


def password_check(password: str) -> str:
    if len(password) < MIN_PASSWORD:
        raise ValueError(f"the password must be at least {MIN_PASSWORD} characters")
    return password


def tenant_get(slug: str) -> Tenant:
    found = Tenant.objects.filter(slug=slug).first()
    if found is None:
        raise ValueError(f"there is no tenant {slug!r} (create it with manage.py createtenant)")
    return found


def tenant_ensure(slug: str, name: str = "") -> tuple[Tenant, bool]:
    """The tenant with this slug, created when missing (an existing one is left as it is)."""
    if len(name.strip()) > 200:
        raise ValueError("a tenant name has at most 200 characters")
    return Tenant.objects.get_or_create(slug=slug_check(slug), defaults={"name": name.strip()})


@dataclass(frozen=True)
class MemberSetup:
    user: User
    membership: Membership
    user_created: bool
    password: str | None


def member_ensure(
    username: str, *, tenant_slug: str, role: str, password: str | None = None
) -> MemberSetup:
    """The user (created when missing) as a member of the tenant in the role.

    A new user gets the given password or a generated one (returned); an existing user keeps
    theirs unless a password is given.
    """
    if not username or len(username) > 150:
        raise ValueError("a username has 1 to 150 characters")
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        raise ValueError(
            f"username {username!r} may hold only letters, digits and @ . + - _"
        ) from None
    parsed: Role = role_parse(role)
    if password is not None:
        password_check(password)
    with transaction.atomic():
        tenant = tenant_get(tenant_slug)
        user, created = User.objects.get_or_create(username=username)
        if created and password is None:
            password = password_new()
        if password is not None:
            user.set_password(password)
            user.save()
        membership, _ = Membership.objects.update_or_create(
            user=user, tenant=tenant, defaults={"role": parsed.value}
        )
    return MemberSetup(user, membership, created, password)


@dataclass(frozen=True)
class DemoLogin:
    password: str
    kept: bool  # the same as the last call's (the file held it and it still signs in)


def demo_seed(*, saved: Path, renew: bool = False) -> DemoLogin:
    """Tenant demo, its agent demo-agent and its owner demo. The owner keeps the password the
    last call saved in `saved` (so signed-in browsers stay signed in across restarts) unless
    renew asks for a new one, or the saved one no longer signs in; a new one is saved there."""
    with transaction.atomic():
        tenant, _ = tenant_ensure(DEMO_TENANT, "Demo (the lab's own agent)")
        Agent.objects.get_or_create(
            tenant=tenant, slug=DEMO_AGENT, defaults={"name": "The lab's scripted agent"}
        )
        user = User.objects.filter(username=DEMO_USER).first()
        last = None if renew or user is None else _saved_password(saved)
        if last is not None and user is not None and user.check_password(last):
            member_ensure(DEMO_USER, tenant_slug=DEMO_TENANT, role=Role.OWNER)
            return DemoLogin(last, kept=True)
        password = password_new()
        member_ensure(DEMO_USER, tenant_slug=DEMO_TENANT, role=Role.OWNER, password=password)
    saved.parent.mkdir(parents=True, exist_ok=True)
    # Only this user reads it, as the report-signing key beside it.
    descriptor = os.open(saved, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(password + "\n")
    return DemoLogin(password, kept=False)


def _saved_password(saved: Path) -> str | None:
    try:
        return saved.read_text().strip() or None
    except OSError:
        return None
