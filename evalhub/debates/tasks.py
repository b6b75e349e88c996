from __future__ import annotations

from celery import shared_task

from evalhub.debates.runner import run_debate


@shared_task(name="debates.run_debate", ignore_result=True, acks_late=True)
def run_debate_task(debate_id: int) -> None:
    # Provider failures are recorded on the debate (status "failed", with the cause) and can be
    # retried by resuming the run; anything else is a bug and should surface in the worker log.
    run_debate(debate_id)
