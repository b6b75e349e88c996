from __future__ import annotations

from celery import shared_task

from evalhub.generation.job import run_generation_chunk


@shared_task(name="generation.chunk", ignore_result=True, acks_late=True, reject_on_worker_lost=True)
def generation_chunk_task(chunk_id: int) -> str:
    # Sent to `default` for API candidates and to `gpu` for in-process models
    # (actions.generation_queue). A redelivered chunk finds its responses stored, or asks again
    # only for the missing ones (identical calls come from the response cache).
    return run_generation_chunk(chunk_id)
