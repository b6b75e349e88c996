from __future__ import annotations

from django.apps import AppConfig


class TalliesConfig(AppConfig):
    name = "evalhub.tallies"
    label = "tallies"
    verbose_name = "Counts the boards are made from"
