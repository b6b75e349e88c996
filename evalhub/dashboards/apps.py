from __future__ import annotations

from django.apps import AppConfig


class DashboardsConfig(AppConfig):
    name = "evalhub.dashboards"
    label = "dashboards"
    verbose_name = "Dashboards and leaderboards"
