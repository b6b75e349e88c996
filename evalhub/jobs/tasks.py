from __future__ import annotations

from celery import shared_task

from evalhub.jobs.actions import do_record_heartbeat
from evalhub.jobs.worker_check import describe_worker


@shared_task(name="jobs.ping_worker", ignore_result=True)
def ping_worker(job_id: int, queue: str, sent_at: str) -> None:
    do_record_heartbeat(job_id, queue, describe_worker(queue, sent_at))
