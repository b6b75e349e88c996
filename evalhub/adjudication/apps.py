from __future__ import annotations

from django.apps import AppConfig


class AdjudicationConfig(AppConfig):
    name = "evalhub.adjudication"
    label = "adjudication"
