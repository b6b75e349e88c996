from __future__ import annotations

from django.apps import AppConfig


class JudgeLabConfig(AppConfig):
    name = "evalhub.judgelab"
    label = "judgelab"
    verbose_name = "Judge lab: how far to trust each judge"

    def ready(self) -> None:
        from evalhub.dashboards import model_sections
        from evalhub.judgelab.report import model_as_judge

        model_sections.register("as_judge", model_as_judge)
