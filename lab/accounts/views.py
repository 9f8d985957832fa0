"""Sign in (throttled) and out (Django's auth views, the lab's templates) and a user's API
tokens page."""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST
from pydantic import BaseModel, Field, ValidationError

from lab.accounts import throttle
from lab.accounts.access import issue_token, revoke_token
from lab.accounts.models import ApiToken

log = logging.getLogger("lab.accounts.signin")


class ThrottledLogin(auth_views.LoginView):
    """Django's sign-in, refused (429) while the account or the address is locked out; a
    correct password is refused then too, or guessing would only need patience."""

    template_name = "accounts/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        username = str(request.POST.get("username", ""))[:150]
        counters = throttle.signin_counters(request, username)
        wait = throttle.retry_after(counters)
        if wait is not None:
            log.warning(
                "sign-in refused while locked: account=%r address=%s retry_after=%ds",
                username,
                throttle.client_address(request),
                wait,
            )
            return self._locked(request, wait)
        response = super().post(request, *args, **kwargs)
        if request.user.is_authenticated:
            throttle.succeeded(counters[0])
            log.info("sign-in: account=%r address=%s", username, throttle.client_address(request))
        else:
            throttle.failed(counters)
            log.warning(
                "sign-in failed: account=%r address=%s", username, throttle.client_address(request)
            )
        return response

    def _locked(self, request: HttpRequest, wait: int) -> HttpResponse:
        minutes = max(1, -(-wait // 60))
        context = self.get_context_data(
            locked=(
                "Too many failed sign-ins for this account or from this address: signing in is "
                f"paused. Try again in {minutes} minute{'s' if minutes != 1 else ''}."
            )
        )
        response = render(request, self.template_name, context, status=429)
        response["Retry-After"] = str(wait)
        return response


login = ThrottledLogin.as_view()
logout = auth_views.LogoutView.as_view()


class TokenForm(BaseModel):
    name: str = Field(default="", max_length=100)


def _user(request: HttpRequest) -> User:
    # login_required has already turned anonymous visitors away.
    assert isinstance(request.user, User)
    return request.user


def _page(
    request: HttpRequest, *, new_token: str = "", error: str = "", status: int = 200
) -> HttpResponse:
    context = {
        "tokens": ApiToken.objects.filter(user=_user(request)).order_by("-created_at"),
        "new_token": new_token,
        "error": error,
    }
    response = render(request, "accounts/tokens.html", context, status=status)
    # The page may hold a raw token: no copy of it in any cache.
    response["Cache-Control"] = "no-store"
    return response


@never_cache
@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    """GET lists the user's tokens; POST creates one and shows it this once."""
    if request.method != "POST":
        return _page(request)
    try:
        form = TokenForm(name=request.POST.get("name", "").strip())
    except ValidationError:
        return _page(
            request, error="No token was created: a name has at most 100 characters.", status=400
        )
    return _page(request, new_token=issue_token(_user(request), name=form.name))


@login_required
@require_POST
def token_revoke(request: HttpRequest) -> HttpResponse:
    try:
        revoke_token(request.POST.get("prefix", ""), user=_user(request))
    except LookupError:
        # Another user's token and no token at all look the same.
        return _page(request, error="There is no live token of yours with that prefix.", status=404)
    return redirect("account_tokens")
