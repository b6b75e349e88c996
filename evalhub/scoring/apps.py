from __future__ import annotations

from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "evalhub.scoring"
    label = "scoring"
    verbose_name = "Scoring (GEM, DHP, YESciEval)"

    def ready(self) -> None:
        from evalhub.jobs import kinds
        from evalhub.scoring.discernment.config import DISCERNMENT
        from evalhub.scoring.gem.config import GEM

        kinds.register(GEM, "evalhub.scoring.gem.runner:GemRunner")
        kinds.register(DISCERNMENT, "evalhub.scoring.discernment.runner:DiscernmentRunner")
