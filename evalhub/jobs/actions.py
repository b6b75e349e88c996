"""Writes to jobs, each followed by a live update to everyone watching the job."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.dispatch import Signal
from django.utils import timezone

from evalhub.celery import QUEUES, task_named
from evalhub.core.runs.outcomes import Outcome
from evalhub.core.runs.usage import Usage
from evalhub.jobs import live
from evalhub.jobs.kinds import run_of
from evalhub.jobs.models import Job, JobStatus, StopRequest, WorkerHeartbeat, stall_after
from evalhub.live import broadcast_html

WORKER_CHECK = "worker_check"
WORKER_CHECK_TIMEOUT_S = 30


# Sent in this process whenever a job's state or progress is broadcast: what a command's progress bar
# follows (evalhub.jobs.cli), with no query of its own.
job_changed = Signal()


def broadcast_job(job: Job) -> None:
    """The job's status card to its watchers, and the kind's own pages (a debate run's summary)."""
    job_changed.send(sender=Job, job=job)
    broadcast_html(live.job_group(job.pk), lambda: live.job_status(job))
    broadcast_html(live.job_group(job.pk, embedded=True), lambda: live.job_status(job, embedded=True))
    runner, run = run_of(job)
    if runner is not None:
        runner.on_change(run)


def do_create_job(kind: str, title: str, *, user: Any = None, params: dict | None = None, total: int = 0) -> Job:
    return Job.objects.create(
        kind=kind,
        title=title,
        params=params or {},
        progress_total=total,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )


def do_progress_job(job: Job, done: int = 1, message: str = "") -> Job:
    """Count `done` more units of work; the first one marks the job running."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.finished:
            return job
        job.progress_done += done
        job.status, job.started_at = JobStatus.RUNNING, job.started_at or timezone.now()
        job.message = message or job.message
        job.save(update_fields=["progress_done", "status", "started_at", "message"])
        broadcast_job(job)
    return job


def do_set_progress(job: Job, done: int, message: str = "") -> Job:
    """Progress counted from the kind's own facts (a debate run's finished debates), for kinds whose
    units are stored as they finish rather than when their chunk is recorded: every page then counts
    the same units. The state is the chunk engine's to change (a claimed chunk marks the job running);
    a finished job keeps its count."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.finished or (job.progress_done == done and not message):
            return job
        job.progress_done = done
        job.message = message or job.message
        job.save(update_fields=["progress_done", "message"])
        broadcast_job(job)
    return job


def do_add_usage(job: Job, usage: Usage) -> Job:
    """Add calls, tokens and cost to the job's total (inside the caller's transaction)."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        job.usage = (job.usage_value + usage).as_dict()
        job.save(update_fields=["usage"])
    return job


def fitted(message: str) -> str:
    """A job's message cut to what its column holds (a kind's summary may run longer: PostgreSQL refused
    the whole settlement where SQLite stored it)."""
    limit = Job._meta.get_field("message").max_length or len(message)
    return message if len(message) <= limit else message[: limit - 1].rstrip() + "…"


def do_settle_job(job: Job, outcome: Outcome, message: str = "", result: Mapping[str, Any] | None = None) -> Job:
    """The last chunk is recorded: the final state follows from what happened (evalhub.core.runs.outcomes),
    never from the work having ended. A stop asked for meanwhile does not hide the outcome: every
    unit has its result by now."""
    state, headline = outcome.settle()
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        job.status, job.finished_at, job.requested = state, timezone.now(), ""
        job.units_failed, job.units_invalid = outcome.failed, outcome.invalid
        job.message = fitted(headline if state == JobStatus.FAILED else (message or headline))
        job.error = headline if state == JobStatus.FAILED else ""
        job.result = result if result is not None else job.result
        job.save()
        broadcast_job(job)
    return job


def do_fail_job(job: Job, error: str) -> Job:
    """Failed, with its cause; the work done so far stays, and resuming the job runs the rest."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        job.status, job.finished_at, job.requested = JobStatus.FAILED, timezone.now(), ""
        job.error = error[:5000]
        job.message = error.splitlines()[0][:500] if error else "Failed."
        job.save()
        broadcast_job(job)
    return job


def _in_hand(job: Job) -> bool:
    """Is any chunk of the job being worked on right now (a heartbeat within the stall time)?"""
    return job.chunks.filter(done_at__isnull=True, heartbeat_at__gte=timezone.now() - stall_after()).exists()


def do_request_stop(job: Job, what: str) -> Job:
    """Pause or cancel (a paused job can still be cancelled). A job with no chunk in hand (queued,
    paused, or its workers gone) stops at once; otherwise its workers stop between calls, within
    seconds, and the last one settles it."""
    if what not in (StopRequest.PAUSE, StopRequest.CANCEL):
        raise ValueError(f"unknown stop request {what!r}")
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if not (job.can_cancel if what == StopRequest.CANCEL else job.can_stop):
            return job
        job.requested = what
        job.save(update_fields=["requested"])
        broadcast_job(job)
    return do_settle_stop(job)


def do_settle_stop(job: Job) -> Job:
    """A stop was asked for and no chunk is in hand any more: the job is Paused or Cancelled, with
    what was stored kept. Called by each worker that stops, by the stall check and by the request."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.finished or not job.requested or _in_hand(job):
            return job
        kept = f"{job.progress_done:,} of {job.progress_total:,} done are kept"
        if job.requested == StopRequest.CANCEL:
            job.status, job.finished_at = JobStatus.CANCELLED, timezone.now()
            job.message = f"Cancelled: {kept}." if job.progress_done else "Cancelled before anything was done."
        else:
            job.status = JobStatus.PAUSED
            job.message = f"Paused: {kept}; Resume runs the rest."
        job.requested = ""
        job.save()
        broadcast_job(job)
    return job


def do_start_worker_check(user: Any) -> Job:
    """Send one ping task to every queue; each worker that takes one records a heartbeat."""
    ping_worker = task_named("jobs.ping_worker")

    with transaction.atomic():
        job = do_create_job(
            WORKER_CHECK,
            "Worker check",
            user=user,
            params={"queues": list(QUEUES), "timeout_s": WORKER_CHECK_TIMEOUT_S},
            total=len(QUEUES),
        )
        sent_at = timezone.now().isoformat()

        def enqueue() -> None:
            for queue in QUEUES:
                # expires: a worker started tomorrow must not answer today's check.
                ping_worker.apply_async(args=[job.pk, queue, sent_at], queue=queue, expires=WORKER_CHECK_TIMEOUT_S)

        transaction.on_commit(enqueue)
    return job


def do_record_heartbeat(job_id: int, queue: str, info: Mapping[str, Any]) -> WorkerHeartbeat | None:
    """Store a worker's answer (once per queue, even if the task runs twice) and update the job."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.finished:
            return None
        try:
            with transaction.atomic():
                heartbeat = WorkerHeartbeat.objects.create(job=job, queue=queue, **info)
        except IntegrityError:
            return WorkerHeartbeat.objects.get(job=job, queue=queue)
        answered = job.heartbeats.count()
        job.progress_done = answered
        job.started_at = job.started_at or timezone.now()
        if answered >= job.progress_total:
            job.status, job.finished_at, job.message = JobStatus.SUCCEEDED, timezone.now(), "Every queue answered."
        else:
            job.status, job.message = JobStatus.RUNNING, f"{queue} answered."
        job.save()
        broadcast_job(job)
    return heartbeat


def do_expire_worker_check(job: Job) -> Job:
    """Close a worker check whose time is up, naming the queues nobody answered on."""
    deadline = job.created_at + timedelta(seconds=job.params.get("timeout_s", WORKER_CHECK_TIMEOUT_S))
    if job.kind != WORKER_CHECK or job.finished or timezone.now() < deadline:
        return job
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.finished:
            return job
        answered = set(job.heartbeats.values_list("queue", flat=True))
        silent = [queue for queue in job.params.get("queues", []) if queue not in answered]
        job.status, job.finished_at = JobStatus.FAILED, timezone.now()
        job.message = f"No worker answered on: {', '.join(silent)}."
        job.error = "\n".join(
            f"Start one with: celery -A evalhub worker -Q {queue}" + (" --pool=solo" if queue == "gpu" else "")
            for queue in silent
        )
        job.save()
        broadcast_job(job)
    return job
