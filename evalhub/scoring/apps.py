from __future__ import annotations

from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "evalhub.scoring"
    label = "scoring"
    verbose_name = "Scoring (GEM, DHP, YESciEval)"

    def ready(self) -> None:
        from evalhub.jobs import kinds

        kinds.register("gem", run_attr="gem_run", results="gem_results", resume="gem_resume")
        kinds.register(
            "discernment", run_attr="discernment_run", results="discernment_results", resume="discernment_resume"
        )
