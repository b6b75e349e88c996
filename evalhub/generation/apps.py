from __future__ import annotations

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def ensure_builtin_templates(sender, **kwargs) -> None:
    # After every migrate (and every flush, which tests do), like Django's own permissions:
    # the built-in templates exist, with the text of the code that is running.
    from evalhub.generation.actions import do_ensure_builtin_templates

    do_ensure_builtin_templates()


class GenerationConfig(AppConfig):
    name = "evalhub.generation"
    label = "generation"
    verbose_name = "Generation runs and hint tiers"

    def ready(self) -> None:
        from evalhub.generation.config import GENERATION
        from evalhub.jobs import kinds

        kinds.register(GENERATION, "evalhub.generation.job:GenerationRunner")

        from evalhub.generation.analysis import model_tier_rows
        from evalhub.reads import model_sections

        model_sections.register("hint_tiers", model_tier_rows)
        post_migrate.connect(ensure_builtin_templates, sender=self, dispatch_uid="generation-builtin-templates")
