"""Jobs split into chunks: create them, run one safely, record one exactly once, notice lost ones.

A chunk's results are written in the same transaction that marks it done, so a retried or
duplicated delivery (acks_late after a killed worker) finds it done and writes nothing. The
chunk that finds no other chunk left settles the job from its kind's outcome.

While a worker is on a chunk, a heartbeat thread stamps the chunk every few seconds and reads
the job's pause or cancel request; the calls of the chunk check that (evalhub.llm.interrupt)
and stop between calls. A chunk whose heartbeat stops (its worker was killed) is sent back to
the queue by any worker's watchdog or by the job's page, without waiting for the broker.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection, transaction
from django.db.models import DurationField, ExpressionWrapper, F, Max
from django.utils import timezone

from evalhub.celery import task_named
from evalhub.core.runs.outcomes import Outcome
from evalhub.core.runs.usage import Usage
from evalhub.db_pool import release_connection
from evalhub.jobs import kinds
from evalhub.jobs.actions import (
    broadcast_job,
    do_add_usage,
    do_fail_job,
    do_progress_job,
    do_set_progress,
    do_settle_job,
    do_settle_stop,
)
from evalhub.jobs.models import Job, JobChunk, JobStatus, stall_after
from evalhub.llm.accounting import counting_calls
from evalhub.llm.interrupt import Interrupted, stopping_when

logger = logging.getLogger(__name__)
R = TypeVar("R")
CHUNK_TASK = "jobs.chunk"  # the one task that works a chunk of any kind (evalhub.jobs.runners.work_chunk)
# The usage of the chunk being recorded, handed from run_chunk to do_complete_chunk.
_work_usage: ContextVar[Usage | None] = ContextVar("evalhub_chunk_usage", default=None)


@dataclass(frozen=True)
class Settled:
    """What a kind says when its last chunk is recorded: the job's message, its stored summary and
    the facts its final state is derived from."""

    message: str
    result: Mapping[str, Any]  # stored as the job's result (JSON): a kind's typed summary
    outcome: Outcome


def do_create_chunks(job: Job, unit_ids: Sequence[int], units: Mapping[int, int] | None, size: int) -> list[JobChunk]:
    """Chunks of `size` ids each; `units` says how many progress units an id stands for (1 if None)."""
    return JobChunk.objects.bulk_create(
        [
            JobChunk(
                job=job,
                index=n,
                unit_ids=list(unit_ids[start : start + size]),
                units_planned=sum(1 if units is None else units.get(i, 0) for i in unit_ids[start : start + size]),
            )
            for n, start in enumerate(range(0, len(unit_ids), size))
        ]
    )


def do_plan_chunks(
    job: Job, unit_ids: Sequence[int], units: Mapping[int, int] | None, size: int, *, enqueue: bool = True
) -> list[JobChunk]:
    """A new job's chunks, sent to its kind's task and queue once the transaction commits (`enqueue=False`
    leaves them to the caller: the run commands work them in-process)."""
    chunks = do_create_chunks(job, unit_ids, units, size)
    if enqueue:
        transaction.on_commit(partial(enqueue_chunks, job))
    return chunks


def pending_chunk_ids(job: Job) -> list[int]:
    return list(job.chunks.filter(done_at__isnull=True).values_list("pk", flat=True))


def enqueue_chunks(job: Job, chunk_ids: Sequence[int] | None = None) -> None:
    """Send chunks (by default every unfinished one) to the kind's task, by name, on its queue.
    Call after commit. A chunk sent twice is harmless: the second delivery finds it done or in hand."""
    runner, run = kinds.run_of(job)
    if runner is None:
        raise LookupError(f"job {job.pk} has no registered kind with a run ({job.kind!r})")
    task, queue = task_named(CHUNK_TASK), runner.queue(run)
    ids = pending_chunk_ids(job) if chunk_ids is None else list(chunk_ids)
    # Stamped before sending: a worker may take a message at once, and its claim must come after this.
    JobChunk.objects.filter(pk__in=ids, done_at__isnull=True).update(sent_at=timezone.now(), queue=queue)
    for chunk_id in ids:
        task.apply_async(args=[chunk_id], queue=queue)


def do_resume_job(job: Job, message: str = "Resumed: what was stored is kept.") -> Job:
    """Run again what did not produce a result: a paused, cancelled or failed job's unfinished
    chunks, a partial job's chunks that had failures, a stalled job's lost chunks; a queued job's
    chunks are sent again (a second delivery of a chunk finds it done or in hand)."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if not (job.can_resume or job.status == JobStatus.QUEUED or job.stalled_since()):
            return job
        reopened = job.chunks.filter(done_at__isnull=False, units_failed__gt=0)
        if not (reopened.exists() or job.chunks.filter(done_at__isnull=True).exists()):
            return job  # nothing would run: the job keeps its state rather than waiting forever as Queued
        reopened.update(done_at=None, units_failed=0, first_error="")
        # Lost claims go back; a chunk a live worker is beating stays its (a resume never runs one twice).
        job.chunks.filter(done_at__isnull=True, heartbeat_at__lt=timezone.now() - stall_after()).update(
            heartbeat_at=None, worker=""
        )
        job.status, job.finished_at, job.requested, job.error = JobStatus.QUEUED, None, "", ""
        job.units_failed = job.units_invalid = 0
        # Counted again from the facts: a chunk recorded while the job stood failed (another chunk's
        # error) added no progress then, and a resumed job that stores every unit must read n of n.
        job.progress_done = _progress_from_facts(job)
        job.message = message
        job.save()
        broadcast_job(job)
        transaction.on_commit(lambda: enqueue_chunks(job))
    return job


def _progress_from_facts(job: Job) -> int:
    """The kind's own count where it keeps one, else the planned units of the chunks recorded."""
    runner, run = kinds.run_of(job)
    counted = runner(run).progress_done(job) if runner is not None else None
    if counted is not None:
        return counted
    return sum(job.chunks.filter(done_at__isnull=False).values_list("units_planned", flat=True))


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


class Heartbeat(threading.Thread):
    """Stamps a chunk every EVALHUB_HEARTBEAT_SECONDS while its work runs, and keeps `reason`
    ("", "pause", "cancel" or "lost") for the calls to read between calls."""

    def __init__(self, chunk: JobChunk, attempt: int) -> None:
        super().__init__(name=f"heartbeat-chunk-{chunk.pk}", daemon=True)
        self.chunk_id, self.job_id, self.attempt = chunk.pk, chunk.job_id, attempt
        self.reason = ""
        self._done = threading.Event()

    def __enter__(self) -> Heartbeat:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self.join(timeout=10)

    def run(self) -> None:
        try:
            while not self._done.wait(settings.EVALHUB_HEARTBEAT_SECONDS):
                self.beat()
        finally:
            connection.close()  # this thread's own connection

    def beat(self) -> None:
        try:
            mine = JobChunk.objects.filter(pk=self.chunk_id, attempts=self.attempt, done_at__isnull=True)
            if not mine.update(heartbeat_at=timezone.now()):
                # Lost only if the chunk is there under another attempt or done: a row this thread
                # cannot see (an open transaction elsewhere) says nothing.
                seen = JobChunk.objects.filter(pk=self.chunk_id).values_list("attempts", "done_at").first()
                if seen is not None and (seen[0] != self.attempt or seen[1] is not None):
                    self.reason = "lost"
                return
            requested = Job.objects.filter(pk=self.job_id).values_list("requested", flat=True).first()
            if requested:
                self.reason = requested
        except DatabaseError:  # a busy database: the next beat tries again
            logger.debug("heartbeat of chunk %s skipped", self.chunk_id, exc_info=True)
        finally:
            release_connection()


def _claim(chunk_id: int) -> tuple[JobChunk | None, str]:
    """Take a chunk for this worker: (chunk, "") or (None, why it is not ours to run)."""
    with transaction.atomic():
        chunk = JobChunk.objects.select_for_update().select_related("job").filter(pk=chunk_id).first()
        if chunk is None:
            return None, "deleted"
        job = chunk.job
        if chunk.done_at is not None:
            return None, "done"
        if job.finished or job.status == JobStatus.PAUSED:
            return None, job.status
        if job.requested:
            transaction.on_commit(lambda: do_settle_stop(job))
            return None, job.requested
        now = timezone.now()
        if chunk.heartbeat_at is not None and chunk.heartbeat_at >= now - stall_after():
            return None, "in progress elsewhere"
        chunk.attempts, chunk.heartbeat_at, chunk.worker = chunk.attempts + 1, now, worker_name()[:200]
        chunk.claimed_at = now
        chunk.save(update_fields=["attempts", "heartbeat_at", "worker", "claimed_at"])
    return chunk, ""


def _release(chunk: JobChunk) -> None:
    JobChunk.objects.filter(pk=chunk.pk, attempts=chunk.attempts, done_at__isnull=True).update(
        heartbeat_at=None, worker=""
    )


def run_chunk(
    chunk_id: int,
    work: Callable[[JobChunk], R],
    record: Callable[[JobChunk, R], bool],
    *,
    count_usage: bool = True,
) -> str:
    """Do one chunk's work and record it, or skip it when it is done, in hand elsewhere, or its job
    was stopped. A pause or cancel stops the work between calls: nothing of the chunk is recorded
    (its calls are cached), and the job settles as paused or cancelled once no chunk is in hand.
    An unexpected error fails the job with its cause (resuming runs the chunk again) and re-raises.
    The calls a stopped or failed chunk made were paid for: they are added to the job's usage too
    (`count_usage`, as do_complete_chunk's)."""
    chunk, skipped = _claim(chunk_id)
    if chunk is None:
        return skipped
    job = chunk.job
    do_progress_job(job, 0, f"Working on chunk {chunk.index + 1} of {job.chunks.count()}…")
    release_connection()  # the work takes one when it needs one; its model calls need none
    try:
        with (
            Heartbeat(chunk, chunk.attempts) as heartbeat,
            stopping_when(lambda: heartbeat.reason),
            counting_calls() as calls,
        ):
            result = work(chunk)
    except Interrupted as stop:
        _release(chunk)
        _add_spent(job, calls.usage() if count_usage else None)
        close_old_connections()
        if stop.reason != "lost":
            do_settle_stop(job)
        return stop.reason
    except Exception as error:
        _release(chunk)
        logger.exception("chunk %s of job %s failed", chunk.index, job.pk)
        _add_spent(job, calls.usage() if count_usage else None)
        do_fail_job(job, f"Chunk {chunk.index + 1}: {type(error).__name__}: {error}")
        raise
    # Every call the work made, whichever code made it, is added to the job as the chunk is recorded.
    token = _work_usage.set(calls.usage())
    try:
        return "recorded" if record(chunk, result) else "done"
    finally:
        _work_usage.reset(token)


def _add_spent(job: Job, usage: Usage | None) -> None:
    if usage is not None and usage.calls:
        do_add_usage(job, usage)


def do_complete_chunk(
    chunk: JobChunk,
    write: Callable[[JobChunk], None],
    progress_message: Callable[[Job], str],
    finish: Callable[[Job], Settled],
    *,
    failed: int | Callable[[], int] = 0,
    first_error: str = "",
    count_usage: bool = True,
    progress_done: Callable[[Job], int | None] | None = None,
) -> bool:
    """In one transaction: `write` the chunk's rows, mark it done (with its `failed` units, which a
    resume runs again), count its progress and usage, and when it is the last one, settle the job
    from `finish(job)`. `failed` may be a function, read once `write` ran. The calls the chunk's work
    made (counted by run_chunk) are added to the job's usage, unless the kind adds them itself as it
    goes (`count_usage=False`: debates, whose usage grows as each debate settles). `progress_done`
    counts the job's progress from the kind's facts instead of adding the chunk's planned units (debates,
    counted as each settles; None: add them). False if already done (another delivery recorded it first)."""
    with transaction.atomic():
        chunk = JobChunk.objects.select_for_update().select_related("job").get(pk=chunk.pk)
        if chunk.done_at is not None:
            return False
        write(chunk)
        chunk.done_at, chunk.heartbeat_at = timezone.now(), None
        chunk.units_failed = failed() if callable(failed) else failed
        chunk.first_error = first_error[:1000]
        chunk.save(update_fields=["done_at", "units_failed", "first_error", "heartbeat_at"])
        job = chunk.job
        usage = _work_usage.get() if count_usage else None
        if usage is not None and usage.calls:
            job = do_add_usage(job, usage)
        counted = progress_done(job) if progress_done is not None else None
        job = do_progress_job(job, chunk.units_planned) if counted is None else do_set_progress(job, counted)
        job = do_progress_job(job, 0, progress_message(job))
        if not job.chunks.filter(done_at__isnull=True).exists():
            settled = finish(job)
            do_settle_job(job, settled.outcome, settled.message, settled.result)
        elif job.requested:
            transaction.on_commit(lambda: do_settle_stop(job))
    return True


def do_requeue_stalled_chunks(job: Job | None = None) -> int:
    """Send back to the queue every chunk in hand whose heartbeat stopped (its worker died), of one
    job or of all; a stopped job's lost chunk settles the job instead. Safe to run from many
    workers at once: each chunk is taken back by one of them."""
    cutoff = timezone.now() - stall_after()
    stalled = JobChunk.objects.filter(
        done_at__isnull=True, heartbeat_at__lt=cutoff, job__status__in=[JobStatus.QUEUED, JobStatus.RUNNING]
    )
    if job is not None:
        stalled = stalled.filter(job=job)
    count = 0
    for chunk in stalled.select_related("job"):
        with transaction.atomic():
            taken = JobChunk.objects.filter(pk=chunk.pk, heartbeat_at=chunk.heartbeat_at, done_at__isnull=True)
            if not taken.update(heartbeat_at=None, worker=""):
                continue  # another watchdog took it, or its worker beat again
            count += 1
            owner = chunk.job
            if owner.requested:
                transaction.on_commit(partial(do_settle_stop, owner))
                continue
            seen = timezone.localtime(chunk.heartbeat_at).strftime("%H:%M:%S")
            do_progress_job(
                owner, 0, f"Chunk {chunk.index + 1}: its worker stopped answering at {seen}; sent back to the queue."
            )
            transaction.on_commit(partial(enqueue_chunks, owner, [chunk.pk]))
    return count


WAIT_WINDOW = timedelta(minutes=15)  # the claims a queue's current wait is read from


def queue_wait(queue: str, now: datetime) -> timedelta:
    """How long the queue's chunks waited for a worker lately: the longest wait of those taken in the
    last WAIT_WINDOW (nothing taken: no wait to add)."""
    longest = JobChunk.objects.filter(queue=queue, claimed_at__gte=now - WAIT_WINDOW, sent_at__isnull=False).aggregate(
        wait=Max(ExpressionWrapper(F("claimed_at") - F("sent_at"), output_field=DurationField()))
    )["wait"]
    return max(longest or timedelta(0), timedelta(0))  # a chunk sent again after its claim waited nothing


def unclaimed_chunks(job: Job | None = None):
    """Chunks sent to the broker that no worker has taken, of running and queued jobs."""
    waiting = JobChunk.objects.filter(
        done_at__isnull=True,
        heartbeat_at__isnull=True,
        sent_at__isnull=False,
        job__status__in=[JobStatus.QUEUED, JobStatus.RUNNING],
        job__requested="",
    )
    return waiting if job is None else waiting.filter(job=job)


def do_resend_unclaimed_chunks(job: Job | None = None) -> int:
    """Send again every chunk whose message went to the broker and was taken by no worker for
    EVALHUB_UNCLAIMED_SECONDS past its queue's current wait: its message was lost (a task that failed
    before it claimed the chunk acknowledged it all the same). A second message is harmless: a delivery
    finds its chunk done or in hand. Safe from many watchdogs at once: each chunk is sent by one."""
    now = timezone.now()
    bound = timedelta(seconds=settings.EVALHUB_UNCLAIMED_SECONDS)
    overdue = unclaimed_chunks(job).filter(sent_at__lt=now - bound)
    count = 0
    for queue in set(overdue.values_list("queue", flat=True)):
        cutoff = now - bound - queue_wait(queue, now)
        for chunk in overdue.filter(queue=queue, sent_at__lt=cutoff).select_related("job"):
            with transaction.atomic():
                taken = JobChunk.objects.filter(pk=chunk.pk, sent_at=chunk.sent_at, heartbeat_at__isnull=True)
                if not taken.update(sent_at=now):
                    continue  # another watchdog sent it, or a worker took it meanwhile
                count += 1
                sent = timezone.localtime(chunk.sent_at).strftime("%H:%M:%S")
                do_progress_job(
                    chunk.job, 0, f"Chunk {chunk.index + 1}: sent at {sent} and taken by no worker; sent again."
                )
                transaction.on_commit(partial(enqueue_chunks, chunk.job, [chunk.pk]))
    return count
