from __future__ import annotations

from django.urls import path

from lab.alerts import views

urlpatterns = [
    path("t/<slug:tenant>/alerts/", views.alerts_page, name="alerts_page"),
    path(
        "t/<slug:tenant>/alerts/endpoints/<int:endpoint_id>/active/",
        views.endpoint_active,
        name="alert_endpoint_active",
    ),
]
