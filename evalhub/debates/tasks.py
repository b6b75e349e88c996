from __future__ import annotations

from celery import shared_task

from evalhub.debates.judging import run_judge
from evalhub.debates.runner import run_debates


@shared_task(name="debates.run_debates", ignore_result=True, acks_late=True)
def run_debates_task(debate_ids: list[int]) -> None:
    # A batch of debates runs concurrently in this task. Provider failures are recorded on each
    # debate (status "failed", with the cause) and retried by resuming the run; anything else is
    # a bug and should surface in the worker log. A killed worker's batch runs again (acks_late)
    # and resumes from the stored turns.
    run_debates(debate_ids)


@shared_task(name="debates.run_judge", ignore_result=True, acks_late=True)
def run_judge_task(judge_run_id: int) -> None:
    run_judge(judge_run_id)
