from __future__ import annotations

from django.urls import path

from lab.operator import views

urlpatterns = [
    path("t/<slug:tenant>/queue/", views.queue_page, name="queue_page"),
    path("t/<slug:tenant>/queue/cases/<int:case_id>/act/", views.case_act, name="case_act"),
]
