"""Writes to jobs, each followed by a live update to everyone watching the job."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone

from evalhub.celery import QUEUES
from evalhub.jobs.models import Job, JobStatus, WorkerHeartbeat
from evalhub.live import broadcast_html

WORKER_CHECK = "worker_check"
WORKER_CHECK_TIMEOUT_S = 30


def job_status_html(job: Job) -> str:
    from evalhub.jobs.kinds import links

    return render_to_string("jobs/_job_status.html", {"job": job, "oob": True, "links": links(job)})


def broadcast_job(job: Job) -> None:
    broadcast_html(job.group_name, job_status_html(job))


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


def do_finish_job(job: Job, message: str = "", result: dict | None = None) -> Job:
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        job.status, job.finished_at, job.message = JobStatus.SUCCEEDED, timezone.now(), message or job.message
        job.result = result or job.result
        job.save()
        broadcast_job(job)
    return job


def do_fail_job(job: Job, error: str) -> Job:
    """Failed, with its cause; the work done so far stays, and running the job again resumes it."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        job.status, job.finished_at, job.error = JobStatus.FAILED, timezone.now(), error[:5000]
        job.save()
        broadcast_job(job)
    return job


def do_request_cancel(job: Job) -> Job:
    """Ask a job to stop; a queued job stops at once, a running one at its next checkpoint."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.finished:
            return job
        job.cancel_requested = True
        fields = ["cancel_requested"]
        if job.status == JobStatus.QUEUED:
            job.status, job.finished_at, job.message = (
                JobStatus.CANCELLED,
                timezone.now(),
                "Cancelled before it started.",
            )
            fields += ["status", "finished_at", "message"]
        job.save(update_fields=fields)
        broadcast_job(job)
    return job


def do_mark_cancelled(job: Job, message: str = "Cancelled; the work done so far is kept.") -> Job:
    """A running job saw its cancel request at a checkpoint and stopped."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.finished:
            return job
        job.status, job.finished_at, job.message = JobStatus.CANCELLED, timezone.now(), message
        job.save(update_fields=["status", "finished_at", "message"])
        broadcast_job(job)
    return job


def do_requeue_job(job: Job, message: str = "Resumed.") -> Job:
    """Put a failed or cancelled job back in the queue; what it finished stays finished."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.status == JobStatus.SUCCEEDED:
            return job
        job.status, job.finished_at, job.cancel_requested, job.error = JobStatus.QUEUED, None, False, ""
        job.message = message
        job.save(update_fields=["status", "finished_at", "cancel_requested", "error", "message"])
        broadcast_job(job)
    return job


def do_start_worker_check(user: Any) -> Job:
    """Send one ping task to every queue; each worker that takes one records a heartbeat."""
    from evalhub.jobs.tasks import ping_worker

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


def do_record_heartbeat(job_id: int, queue: str, info: dict[str, Any]) -> WorkerHeartbeat | None:
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
