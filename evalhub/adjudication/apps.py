from __future__ import annotations

from django.apps import AppConfig


class AdjudicationConfig(AppConfig):
    name = "evalhub.adjudication"
    label = "adjudication"

    def ready(self) -> None:
        from evalhub.adjudication.actions import do_open_items
        from evalhub.debates.actions import on_unresolved

        on_unresolved(do_open_items)
