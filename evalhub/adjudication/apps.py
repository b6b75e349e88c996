from __future__ import annotations

from django.apps import AppConfig


class AdjudicationConfig(AppConfig):
    name = "evalhub.adjudication"
    label = "adjudication"

    def ready(self) -> None:
        from evalhub.adjudication.actions import do_open_items, held_blind
        from evalhub.debates.actions import on_unresolved
        from evalhub.debates.visibility import on_withheld

        on_unresolved(do_open_items)
        on_withheld(held_blind)
