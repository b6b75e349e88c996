from __future__ import annotations

from celery import shared_task

from evalhub.jobs.actions import do_record_heartbeat
from evalhub.jobs.chunks import CHUNK_TASK
from evalhub.jobs.runners import work_chunk
from evalhub.jobs.worker_check import describe_worker


@shared_task(name=CHUNK_TASK, ignore_result=True, acks_late=True, reject_on_worker_lost=True)
def chunk_task(chunk_id: int) -> str:
    # Sent to the queue its kind chooses (JobRunner.queue). A killed worker's chunk goes back to the
    # queue (acks_late, and the heartbeat's watchdog without waiting for the broker); a chunk writes
    # its results in the transaction that marks it done, so a second delivery writes nothing twice.
    return work_chunk(chunk_id)


# The names chunks were queued under before one task served every kind: a message already in the
# broker when a deployment upgrades is still worked, by the same code.
for _legacy in (
    "debates.debate_chunk",
    "debates.judge_chunk",
    "generation.chunk",
    "scoring.gem_chunk",
    "scoring.discernment_chunk",
):
    shared_task(name=_legacy, ignore_result=True, acks_late=True, reject_on_worker_lost=True)(work_chunk)


@shared_task(name="jobs.ping_worker", ignore_result=True)
def ping_worker(job_id: int, queue: str, sent_at: str) -> None:
    do_record_heartbeat(job_id, queue, describe_worker(queue, sent_at))
