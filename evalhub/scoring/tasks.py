from __future__ import annotations

from celery import shared_task

from evalhub.scoring.discernment import run_discernment_chunk
from evalhub.scoring.gem_runner import run_gem_chunk


@shared_task(name="scoring.gem_chunk", ignore_result=True, acks_late=True, reject_on_worker_lost=True)
def gem_chunk_task(chunk_id: int) -> str:
    # Sent to the `gpu` queue (actions.enqueue_chunks). A killed worker's chunk goes back to the
    # queue (acks_late); a chunk writes all its rows in one transaction and a second attempt
    # finds it done, so nothing is scored or stored twice.
    return run_gem_chunk(chunk_id)


@shared_task(name="scoring.discernment_chunk", ignore_result=True, acks_late=True, reject_on_worker_lost=True)
def discernment_chunk_task(chunk_id: int) -> str:
    # Sent to `gpu` for local judges and to `default` for API judges (actions.judge_queue); a
    # redelivered chunk finds its scores recorded, or resumes without repeating stored calls.
    return run_discernment_chunk(chunk_id)
