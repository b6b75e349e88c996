from __future__ import annotations

from django.apps import AppConfig


class SurveysConfig(AppConfig):
    name = "evalhub.surveys"
    label = "surveys"
