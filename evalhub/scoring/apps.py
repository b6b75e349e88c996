from __future__ import annotations

from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "evalhub.scoring"
    label = "scoring"
    verbose_name = "Scoring (GEM, DHP, YESciEval)"

    def ready(self) -> None:
        from evalhub.jobs import kinds
        from evalhub.scoring import actions

        kinds.register("gem", run_attr="gem_run", results="gem_results", resume=actions.do_resume_gem_run)
        kinds.register(
            "discernment",
            run_attr="discernment_run",
            results="discernment_results",
            resume=actions.do_resume_discernment_run,
        )
