"""Presenting ownership in tests: the session cookie a run's owner would send."""

from __future__ import annotations

from channels.db import database_sync_to_async
from django.conf import settings
from django.test import Client

from lab.runs.ownership import OWNER_SESSION_KEY, headless_owner_token
from lab.web.access import owner_session_new, session_cookie


async def owner_cookie(owner_token: str | None = None) -> tuple[bytes, bytes]:
    """The Cookie header of a new session owning what owner_token (default: run_start's
    headless owner) owns."""
    session = await database_sync_to_async(owner_session_new)(owner_token or headless_owner_token())
    return session_cookie(session)


def act_as_owner(client: Client, owner_token: str | None = None) -> None:
    """Make a Django test client's session own what owner_token owns."""
    session = owner_session_new(owner_token or headless_owner_token())
    client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key or ""
    assert client.session[OWNER_SESSION_KEY] == (owner_token or headless_owner_token())
