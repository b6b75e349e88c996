from __future__ import annotations

from django.apps import AppConfig


class SystemConfig(AppConfig):
    name = "evalhub.system"
    label = "system"
