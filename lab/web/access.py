"""The one ownership check that pages, report downloads and the run socket share."""

from __future__ import annotations

from importlib import import_module
from types import SimpleNamespace
from typing import Any, cast

from django.conf import settings
from django.contrib.auth import get_user
from django.contrib.sessions.backends.base import SessionBase
from django.http import Http404, HttpRequest

from lab.runs.ownership import (
    OWNER_SESSION_KEY,
    RunAccess,
    Viewer,
    owner_token_new,
    run_access,
)

NOT_FOUND = "There is no run with this id."


def user_id_of(session: SessionBase | None) -> int | None:
    """The signed-in user of a session (checked as Django's auth checks it), or None."""
    if session is None:
        return None
    user = get_user(cast(HttpRequest, SimpleNamespace(session=session)))
    return user.pk if user.is_authenticated else None


def user_id_for(request: HttpRequest) -> int | None:
    """The request's signed-in user (AuthenticationMiddleware has already looked), or None."""
    user = getattr(request, "user", None)
    return user.pk if user is not None and user.is_authenticated else None


def _viewer(session: SessionBase | None, kwargs: dict[str, Any], user_id: int | None) -> Viewer:
    return Viewer(
        owner_token=session.get(OWNER_SESSION_KEY) if session is not None else None,
        share_token=kwargs.get("share"),
        user_id=user_id,
    )


def run_for_request(request: HttpRequest, run_id: object = None) -> RunAccess:
    """The run a page asks for, seen through its session or its share link; 404 otherwise."""
    kwargs = request.resolver_match.kwargs if request.resolver_match else {}
    access = run_access(
        viewer=_viewer(request.session, kwargs, user_id_for(request)),
        run_id=str(run_id) if run_id else None,
    )
    if access is None:
        # Someone else's run and no run at all look the same.
        raise Http404(NOT_FOUND)
    return access


def run_for_scope(scope: dict[str, Any]) -> RunAccess | None:
    """The same check for a WebSocket (sync: it reads the session and the run)."""
    kwargs = scope["url_route"]["kwargs"]
    run_id = kwargs.get("run_id")
    session = scope.get("session")
    return run_access(
        viewer=_viewer(session, kwargs, user_id_of(session)),
        run_id=str(run_id) if run_id else None,
    )


def owner_token_of(request: HttpRequest) -> str | None:
    return request.session.get(OWNER_SESSION_KEY)


def owner_token_ensure(request: HttpRequest) -> str:
    """The session's owner token, created (with the session) on its first run."""
    token = request.session.get(OWNER_SESSION_KEY)
    if not token:
        token = request.session[OWNER_SESSION_KEY] = owner_token_new()
    return token


def owner_session_new(owner_token: str) -> SessionBase:
    """A stored session holding an owner token, as a browser's holds one after starting a run."""
    session: SessionBase = import_module(settings.SESSION_ENGINE).SessionStore()
    session[OWNER_SESSION_KEY] = owner_token
    session.create()
    return session


def session_cookie(session: SessionBase) -> tuple[bytes, bytes]:
    """The Cookie header that presents the session, for in-process sockets (runscenarios)."""
    return (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session.session_key}".encode())
