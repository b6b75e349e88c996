from __future__ import annotations

from django.apps import AppConfig


class DashboardsConfig(AppConfig):
    name = "evalhub.dashboards"
    label = "dashboards"
    verbose_name = "Dashboards and leaderboards"

    def ready(self) -> None:
        from evalhub.dashboards.label_requests import on_settled
        from evalhub.debates.actions import on_settled as when_settled

        when_settled(on_settled)  # a labelling batch people finished: look at the interval again
