from __future__ import annotations

from django.urls import path

from lab.operator import evidence, views

urlpatterns = [
    path("t/<slug:tenant>/queue/", views.queue_page, name="queue_page"),
    path("t/<slug:tenant>/queue/cases/<int:case_id>/", views.case_page, name="operator_case"),
    path("t/<slug:tenant>/queue/cases/<int:case_id>/act/", views.case_act, name="case_act"),
    # Call ids are any 1-128 non-space characters, slashes included.
    path("t/<slug:tenant>/calls/<path:call_id>/", evidence.call_page, name="operator_call"),
    path("t/<slug:tenant>/runs/<uuid:run_id>/", evidence.run_snapshot, name="operator_run"),
    path(
        "t/<slug:tenant>/runs/<uuid:run_id>/report.json",
        evidence.run_report,
        name="operator_run_report",
    ),
    path("t/<slug:tenant>/trials/", evidence.trials_list, name="operator_trials_list"),
    path("t/<slug:tenant>/compare/", evidence.compare_page, name="operator_compare"),
    path(
        "t/<slug:tenant>/compare/report.json",
        evidence.compare_report,
        name="operator_compare_report",
    ),
    path(
        "t/<slug:tenant>/trials/<uuid:group_id>/",
        evidence.trials_page,
        name="operator_trials",
    ),
]
