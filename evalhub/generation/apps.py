from __future__ import annotations

from django.apps import AppConfig


class GenerationConfig(AppConfig):
    name = "evalhub.generation"
    label = "generation"
    verbose_name = "Generation runs and hint tiers"

    def ready(self) -> None:
        from evalhub.generation import actions
        from evalhub.jobs import kinds

        kinds.register(
            actions.GENERATION,
            run_attr="generation_run",
            results="generation_results",
            resume=actions.do_resume_generation_run,
        )
