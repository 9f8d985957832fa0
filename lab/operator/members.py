"""Who may open a tenant's operator pages: its members. Anonymous visitors are sent to log in,
anyone else is told there is no such queue (404), whatever the page."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django_htmx.http import HttpResponseClientRedirect

from lab.accounts.access import role_in
from lab.accounts.roles import Role

NOT_FOUND = "There is no such queue."

MemberView = Callable[..., HttpResponse]


def member_role(request: HttpRequest, tenant: str) -> Role:
    """The member's role; Http404 for anyone who is not a member (or no such tenant)."""
    role = role_in(request.user, tenant)
    if role is None:
        raise Http404(NOT_FOUND)
    return role


def to_login(request: HttpRequest, tenant: str) -> HttpResponse:
    """To the login page, and back to the page after (an action's URL only takes a POST)."""
    safe = request.method in ("GET", "HEAD")
    back = request.get_full_path() if safe else reverse("queue_page", args=[tenant])
    if getattr(request, "htmx", False):
        # An htmx request would swap the login page into the card; send the whole page there.
        return HttpResponseClientRedirect(f"{reverse('login')}?{urlencode({'next': back})}")
    return redirect_to_login(back)


def members_only(view: MemberView) -> MemberView:
    """Call `view(request, tenant, role, ...)` for a member of the tenant only."""

    @wraps(view)
    def checked(request: HttpRequest, tenant: str, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return to_login(request, tenant)
        return view(request, tenant, member_role(request, tenant), **kwargs)

    return checked
