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
