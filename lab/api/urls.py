"""/api/ (django-ninja; anything else under it is a JSON problem too) and the rollup page."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponseBase
from django.urls import URLPattern, path, re_path
from django.views.generic import RedirectView

from lab.api import pages
from lab.api.api import api
from lab.api.errors import api_not_found, problem_response

View = Callable[..., HttpResponseBase]


def _method_problem(view: View) -> View:
    """ninja answers a wrong method with a plain-text 405; make it a problem like every error."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(request, *args, **kwargs)
        if response.status_code != 405:
            return response
        allowed = response.get("Allow", "")
        problem = problem_response(
            405, "method_not_allowed", f"{request.method} is not allowed here; use {allowed}"
        )
        problem["Allow"] = allowed
        return problem

    return wrapped


# Not named app_name: include() would read that as this module's namespace.
_patterns, _app, _namespace = api.urls
for pattern in _patterns:
    if isinstance(pattern, URLPattern):
        pattern.callback = _method_problem(pattern.callback)

urlpatterns = [
    # ninja's own root view answers an HTML 404 there.
    path("api/", api_not_found),
    # ninja serves the docs at /api/docs only; the slash a browser or a person adds finds them too.
    path("api/docs/", RedirectView.as_view(url="/api/docs", permanent=False)),
    path("api/", (_patterns, _app, _namespace)),
    re_path(r"^api/(?P<path>.*)$", api_not_found),
    path("t/<slug:tenant>/rollup/", pages.rollup_page, name="rollup_page"),
]
