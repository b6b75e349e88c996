"""Jobs split into chunks of prompts: create them, run one safely, record one exactly once.

A chunk's results are written in the same transaction that marks it done, so a retried or
duplicated delivery (acks_late after a killed worker) finds it done and writes nothing. The
chunk that finds no other chunk left finishes the job with the job's summary.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from django.db import transaction
from django.utils import timezone

from evalhub.jobs.actions import do_fail_job, do_finish_job, do_mark_cancelled, do_progress_job, do_requeue_job
from evalhub.jobs.models import Job, JobChunk

logger = logging.getLogger(__name__)
R = TypeVar("R")


def do_create_chunks(job: Job, prompt_ids: Sequence[int], units: Mapping[int, int], size: int) -> list[JobChunk]:
    return JobChunk.objects.bulk_create(
        [
            JobChunk(
                job=job,
                index=n,
                prompt_ids=list(prompt_ids[start : start + size]),
                units_planned=sum(units.get(p, 0) for p in prompt_ids[start : start + size]),
            )
            for n, start in enumerate(range(0, len(prompt_ids), size))
        ]
    )


def pending_chunk_ids(job: Job) -> list[int]:
    return list(job.chunks.filter(done_at__isnull=True).values_list("pk", flat=True))


def chosen_prompt_ids(benchmark, subset: Sequence[int] = ()) -> list[int]:
    """The benchmark's prompt ids in order, or only those of `subset` (empty = all)."""
    prompts = benchmark.prompts.order_by("pk")
    if subset:
        prompts = prompts.filter(pk__in=subset)
    return list(prompts.values_list("pk", flat=True))


def enqueue_pending_chunks(job: Job, task, queue: str) -> None:
    """Send every unfinished chunk of `job` to `task` on `queue` (call after commit)."""
    for chunk_id in pending_chunk_ids(job):
        task.apply_async(args=[chunk_id], queue=queue)


def do_resume_chunked_job(job: Job, enqueue: Callable[[], None], message: str = "Resumed: finished chunks are kept."):
    """Requeue a failed, cancelled or stalled chunked job; `enqueue` sends its unfinished chunks once committed."""
    with transaction.atomic():
        do_requeue_job(job, message)
        transaction.on_commit(enqueue)


def run_chunk(chunk_id: int, work: Callable[[JobChunk], R], record: Callable[[JobChunk, R], bool]) -> str:
    """Do one chunk's work and record it, or skip it when it is done or its job was cancelled.
    An unexpected error fails the job with its cause (resuming runs the chunk again) and re-raises."""
    chunk = JobChunk.objects.select_related("job").get(pk=chunk_id)
    job = chunk.job
    if chunk.done_at is not None:
        return "done"
    if job.cancel_requested:
        do_mark_cancelled(job)
        return "cancelled"
    if job.finished:
        return job.status
    JobChunk.objects.filter(pk=chunk.pk).update(attempts=chunk.attempts + 1)
    do_progress_job(job, 0, f"Working on chunk {chunk.index + 1} of {job.chunks.count()}…")
    try:
        result = work(chunk)
    except Exception as error:
        logger.exception("chunk %s of job %s failed", chunk.index, job.pk)
        do_fail_job(job, f"Chunk {chunk.index + 1}: {type(error).__name__}: {error}")
        raise
    return "recorded" if record(chunk, result) else "done"


def do_complete_chunk(
    chunk: JobChunk,
    write: Callable[[JobChunk], None],
    progress_message: Callable[[Job], str],
    finish: Callable[[Job], tuple[str, dict[str, Any]]],
) -> bool:
    """In one transaction: `write` the chunk's rows, mark it done, count its progress, and when it
    is the last one, finish the job with `finish(job)` → (message, result). False if already done."""
    with transaction.atomic():
        chunk = JobChunk.objects.select_for_update().select_related("job").get(pk=chunk.pk)
        if chunk.done_at is not None:
            return False
        write(chunk)
        chunk.done_at = timezone.now()
        chunk.save(update_fields=["done_at"])
        job = do_progress_job(chunk.job, chunk.units_planned)
        job = do_progress_job(job, 0, progress_message(job))
        if not job.chunks.filter(done_at__isnull=True).exists():
            message, result = finish(job)
            do_finish_job(job, message, result=result)
    return True
