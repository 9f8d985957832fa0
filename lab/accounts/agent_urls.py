from __future__ import annotations

from django.urls import path

from lab.accounts import agent_views, settings_views

urlpatterns = [
    path("t/<slug:tenant>/settings/", settings_views.tenant_settings, name="tenant_settings"),
    path("t/<slug:tenant>/agents/", agent_views.agents_page, name="agents_page"),
    path("t/<slug:tenant>/agents/<slug:slug>/", agent_views.agent_edit, name="agent_edit"),
    path(
        "t/<slug:tenant>/agents/<slug:slug>/sandbox-token/",
        agent_views.agent_sandbox_token,
        name="agent_sandbox_token",
    ),
    path(
        "t/<slug:tenant>/agents/<slug:slug>/delete/",
        agent_views.agent_delete,
        name="agent_delete",
    ),
]
