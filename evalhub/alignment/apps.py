from __future__ import annotations

from django.apps import AppConfig


class AlignmentConfig(AppConfig):
    name = "evalhub.alignment"
    label = "alignment"
    verbose_name = "Judge alignment: judges improved on train labels, scored on held-out ones"

    def ready(self) -> None:
        from evalhub.jobs import kinds

        kinds.register("few_shot", "evalhub.alignment.improvers.fewshot:FewShotRunner")
        kinds.register("settings_search", "evalhub.alignment.improvers.settings:SettingsSearchRunner")
        kinds.register("instruction_rewrite", "evalhub.alignment.improvers.rewriting:InstructionRewriteRunner")
        kinds.register("reasons", "evalhub.alignment.improvers.reasons:ReasonsRunner")
