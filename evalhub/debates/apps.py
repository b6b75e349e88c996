from __future__ import annotations

from django.apps import AppConfig


class DebatesConfig(AppConfig):
    name = "evalhub.debates"
    label = "debates"

    def ready(self) -> None:
        from evalhub.debates.config import DEBATE, JUDGE_RUN
        from evalhub.jobs import kinds

        kinds.register(DEBATE, "evalhub.debates.runner:DebateRunner")
        kinds.register(JUDGE_RUN, "evalhub.debates.judging:JudgeRunRunner")
        self.count_for_the_boards()

    @staticmethod
    def count_for_the_boards() -> None:
        """What the boards' counts need to hear of beyond do_recount_debates (evalhub.tallies.signals)."""
        from evalhub.debates.models import Debate, DebateRun, JudgeRun, JudgeVerdict
        from evalhub.tallies.signals import watch_changes, watch_deletions

        watch_deletions(Debate, DebateRun, JudgeRun, JudgeVerdict)
        watch_changes(DebateRun, ("variant", "criterion_id", "benchmark_id"))
        watch_changes(JudgeRun, ("criteria_variant", "check_position", "reference_id"))
