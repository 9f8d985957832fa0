from __future__ import annotations

from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "lab.web"
    label = "web"
