from __future__ import annotations

from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "evalhub.scoring"
    label = "scoring"
    verbose_name = "Scoring (GEM, DHP, YESciEval)"

    def ready(self) -> None:
        from evalhub.jobs import kinds
        from evalhub.scoring import actions

        kinds.register(
            actions.GEM, run_attr="gem_run", results="gem_results", task="scoring.gem_chunk", queue=actions.gem_queue
        )
        kinds.register(
            actions.DISCERNMENT,
            run_attr="discernment_run",
            results="discernment_results",
            task="scoring.discernment_chunk",
            queue=actions.judge_queue,
        )
