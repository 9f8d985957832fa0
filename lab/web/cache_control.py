"""No cache keeps an authenticated answer: a page or API response to a signed-in session, a
bearer token or a session that owns runs is `private, no-store` (a shared proxy or the
browser's back button would otherwise show one member's queue, rollup or tokens, or one
visitor's runs, to whoever comes next)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase
from django.utils.cache import patch_cache_control

from lab.runs.ownership import OWNER_SESSION_KEY


def _private(response: HttpResponseBase) -> HttpResponseBase:
    patch_cache_control(response, private=True, no_store=True)
    return response


def _bearer(request: HttpRequest) -> bool:
    return bool(request.headers.get("Authorization"))


class PrivateAnswers:
    """After AuthenticationMiddleware: marks each answer to credentials as never cached."""

    async_capable = True
    sync_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        response: HttpResponseBase = self.get_response(request)
        if (
            _bearer(request)
            or request.user.is_authenticated
            or request.session.get(OWNER_SESSION_KEY)
        ):
            return _private(response)
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        waiting: Awaitable[HttpResponseBase] = self.get_response(request)
        response = await waiting
        if (
            _bearer(request)
            or (await request.auser()).is_authenticated
            or await request.session.aget(OWNER_SESSION_KEY)
        ):
            return _private(response)
        return response
