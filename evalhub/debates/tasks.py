from __future__ import annotations

from celery import shared_task

from evalhub.debates.judging import run_judge_chunk
from evalhub.debates.runner import run_debate_chunk


@shared_task(name="debates.debate_chunk", ignore_result=True, acks_late=True, reject_on_worker_lost=True)
def debate_chunk_task(chunk_id: int) -> str:
    # A chunk's debates run concurrently in this task. Provider failures are recorded on each
    # debate (status "failed", with the cause) and run again by Retry failed; anything else is a
    # bug, fails the job with its cause and surfaces in the worker log. A killed worker's chunk
    # goes back to the queue (heartbeat, evalhub.jobs.chunks) and resumes from the stored turns.
    return run_debate_chunk(chunk_id)


@shared_task(name="debates.judge_chunk", ignore_result=True, acks_late=True, reject_on_worker_lost=True)
def judge_chunk_task(chunk_id: int) -> str:
    return run_judge_chunk(chunk_id)
