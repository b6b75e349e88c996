from __future__ import annotations

from django.apps import AppConfig


class DebatesConfig(AppConfig):
    name = "evalhub.debates"
    label = "debates"

    def ready(self) -> None:
        from evalhub.debates import actions
        from evalhub.jobs import kinds

        kinds.register(
            actions.DEBATE,
            run_attr="debate_run",
            results="debate_run_results",
            task="debates.debate_chunk",
            queue=actions.debate_queue,
            on_change=actions.broadcast_run,
        )
        kinds.register(
            actions.JUDGE_RUN,
            run_attr="judge_run",
            results="debate_judge_run_results",
            task="debates.judge_chunk",
            queue=actions.judge_queue,
        )
        self.count_for_the_boards()

    @staticmethod
    def count_for_the_boards() -> None:
        """What the boards' counts need to hear of beyond do_recount_debates (evalhub.tallies.signals)."""
        from evalhub.debates.models import Debate, DebateRun, JudgeRun, JudgeVerdict
        from evalhub.tallies.signals import watch_changes, watch_deletions

        watch_deletions(Debate, DebateRun, JudgeRun, JudgeVerdict)
        watch_changes(DebateRun, ("variant", "criterion_id", "benchmark_id"))
        watch_changes(JudgeRun, ("criteria_variant", "check_position", "reference_id"))
