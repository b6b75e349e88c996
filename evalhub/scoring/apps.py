from __future__ import annotations

from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "evalhub.scoring"
    label = "scoring"
    verbose_name = "Scoring (GEM, DHP)"
