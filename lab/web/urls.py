from __future__ import annotations

from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from lab.web import (
    compare_views,
    grade_views,
    mcp_views,
    recording_views,
    report_views,
    trial_views,
    views,
)

urlpatterns = [
    path("", views.index, name="index"),
    # Browsers ask for /favicon.ico whatever the page links; the icon is a static SVG.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("runs/", views.run_create, name="run_create"),
    path("runs/<uuid:run_id>/", views.run_page, name="run_page"),
    path("runs/<uuid:run_id>/events.json", views.run_events_json, name="run_events_json"),
    path(
        "runs/<uuid:run_id>/recording.wav",
        recording_views.run_recording_wav,
        name="run_recording_wav",
    ),
    path("runs/<uuid:run_id>/share/", views.run_share, name="run_share"),
    # The run's sandboxed tools for an outside agent's MCP client (served at /mcp/runs/<id>/).
    path("runs/<uuid:run_id>/mcp/", mcp_views.run_mcp_token, name="run_mcp_token"),
    # Read-only capability links: the token alone names the run.
    path("share/<str:share>/", views.run_page, name="shared_run_page"),
    path("share/<str:share>/events.json", views.run_events_json, name="shared_events_json"),
    path(
        "share/<str:share>/recording.wav",
        recording_views.run_recording_wav,
        name="shared_recording_wav",
    ),
    path("share/<str:share>/report.json", views.shared_report_json, name="shared_report_json"),
    path("trials/<uuid:group_id>/", trial_views.trials_page, name="trials_page"),
    path("trials/<uuid:group_id>/progress/", trial_views.trials_progress, name="trials_progress"),
    path("compare/", compare_views.compare_page, name="compare_page"),
    path("compare/report.json", compare_views.compare_report, name="compare_report"),
    path("scenarios/<str:scenario_id>.json", views.scenario_json, name="scenario_json"),
    path("runs/<uuid:run_id>/report.json", report_views.run_report_json, name="run_report_json"),
    path("keys/lab-ed25519.pub", report_views.lab_public_key_pem, name="lab_public_key_pem"),
    path("reports/", report_views.report_create, name="report_create"),
    path("reports/import/", report_views.report_import_page, name="report_import_page"),
    path("reports/schema.json", report_views.report_schema, name="report_schema"),
    path("reports/<uuid:report_id>/", report_views.report_page, name="report_page"),
    path("reports/<uuid:report_id>/replay/", report_views.report_replay, name="report_replay"),
    path("grade/", grade_views.grade_page, name="grade_page"),
    path("grade/examples/<str:filename>", grade_views.example_list, name="grade_example"),
]
