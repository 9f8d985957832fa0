from __future__ import annotations

from django.urls import include, path

from lab.web import trust_views

urlpatterns = [
    path("", include("lab.web.urls")),
    path("accounts/", include("lab.accounts.urls")),
    path("", include("lab.operator.urls")),
    path("", include("lab.alerts.urls")),
    path("", include("lab.accounts.agent_urls")),
    path("", include("lab.api.urls")),
    path("reports/keys/", trust_views.trusted_keys, name="trusted_keys"),
    path(
        "reports/keys/<int:pin_id>/remove/",
        trust_views.trusted_key_remove,
        name="trusted_key_remove",
    ),
]
