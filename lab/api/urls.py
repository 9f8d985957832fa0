"""/api/ (django-ninja; anything else under it is a JSON 404) and the rollup page."""

from __future__ import annotations

from django.urls import path, re_path

from lab.api import pages
from lab.api.api import api
from lab.api.errors import api_not_found

urlpatterns = [
    # ninja's own root view answers an HTML 404 there.
    path("api/", api_not_found),
    path("api/", api.urls),
    re_path(r"^api/(?P<path>.*)$", api_not_found),
    path("t/<slug:tenant>/rollup/", pages.rollup_page, name="rollup_page"),
]
