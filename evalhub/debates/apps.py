from __future__ import annotations

from django.apps import AppConfig


class DebatesConfig(AppConfig):
    name = "evalhub.debates"
    label = "debates"
