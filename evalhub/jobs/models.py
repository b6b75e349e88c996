"""Background jobs: one row per job with its status and progress, shared by every kind."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from evalhub.core.runs.outcomes import partial_words
from evalhub.core.runs.usage import Usage


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    SUCCEEDED = "succeeded", "Succeeded"
    PARTIAL = "partial", "Finished with failures"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINISHED = (JobStatus.SUCCEEDED, JobStatus.PARTIAL, JobStatus.FAILED, JobStatus.CANCELLED)
# States a job can be resumed from: what is stored stays, the rest runs again.
RESUMABLE = (JobStatus.PAUSED, JobStatus.PARTIAL, JobStatus.FAILED, JobStatus.CANCELLED)


class StopRequest(models.TextChoices):
    NONE = "", "—"
    PAUSE = "pause", "Pause"
    CANCEL = "cancel", "Cancel"


def stall_after() -> timedelta:
    """How long a chunk may go without a heartbeat before its worker counts as gone."""
    return timedelta(seconds=settings.EVALHUB_STALL_SECONDS)


class Job(models.Model):
    kind = models.CharField(max_length=50)
    title = models.CharField(max_length=200)
    status = models.CharField(max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    requested = models.CharField(
        max_length=10, choices=StopRequest.choices, blank=True, default="", help_text="A pause or cancel asked for."
    )
    units_failed = models.PositiveIntegerField(default=0, help_text="Units that produced no result (with a cause).")
    units_invalid = models.PositiveIntegerField(default=0, help_text="Units answered, but not usable.")
    usage = models.JSONField(
        default=dict, blank=True, help_text="Calls, tokens and cost (evalhub.core.runs.usage.Usage)."
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "kind"])]

    def __str__(self) -> str:
        return f"{self.title} ({self.get_status_display()})"

    def get_absolute_url(self) -> str:
        return reverse("job_detail", args=[self.pk])

    @property
    def group_name(self) -> str:
        from evalhub.jobs.live import job_group

        return job_group(self.pk)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == JobStatus.SUCCEEDED else 0
        return min(100, round(100 * self.progress_done / self.progress_total))

    @property
    def status_words(self) -> str:
        """The state as every page names it ("Finished with 3 failed / 2 invalid" for a partial run)."""
        if self.status == JobStatus.PARTIAL:
            return partial_words(self.units_failed, self.units_invalid)
        if self.requested and not self.finished and self.status != JobStatus.PAUSED:
            return "Cancelling…" if self.requested == StopRequest.CANCEL else "Pausing…"
        if self.status == JobStatus.QUEUED and self.started_at:
            return "Queued to resume"  # resumed, and no worker has taken it again yet
        return self.get_status_display()

    @property
    def pace(self) -> str:
        """Units per minute and the time left at that pace, while running ("" before there is one)."""
        if self.status != JobStatus.RUNNING or not self.started_at or not self.progress_done:
            return ""
        elapsed = max(1.0, (timezone.now() - self.started_at).total_seconds())
        per_minute = self.progress_done / elapsed * 60
        left = (self.progress_total - self.progress_done) / (self.progress_done / elapsed)
        when = f"about {left / 60:.0f} min left" if left >= 90 else f"about {left:.0f} s left"
        return f"{per_minute:,.1f} per minute · {when}" if left > 0 else f"{per_minute:,.1f} per minute"

    @property
    def cancel_requested(self) -> bool:
        return self.requested == StopRequest.CANCEL

    @property
    def can_stop(self) -> bool:
        """Pause and Cancel apply: the job is queued or running and no stop was asked for yet."""
        return self.status in (JobStatus.QUEUED, JobStatus.RUNNING) and not self.requested

    @property
    def can_cancel(self) -> bool:
        """Cancel applies where Pause does, and to a paused job too (nothing is in hand: it ends at once)."""
        return self.can_stop or (self.status == JobStatus.PAUSED and not self.requested)

    @property
    def can_resume(self) -> bool:
        """Resume (or Retry failed) has something to run: a partial job only when units failed —
        invalid answers were answered and stored, so running again would change nothing."""
        return self.status in RESUMABLE and not (self.status == JobStatus.PARTIAL and not self.units_failed)

    @property
    def usage_value(self) -> Usage:
        return Usage.from_dict(self.usage)

    def stalled_since(self):
        """When the last heartbeat of a running job was seen, if no chunk has beaten for the stall
        time (its workers are gone, or none took it); None while work goes on or for other states."""
        if self.status not in (JobStatus.RUNNING, JobStatus.QUEUED) or not self.chunks.exists():
            return None
        last = self.chunks.aggregate(last=models.Max("heartbeat_at"))["last"] or self.started_at or self.created_at
        in_progress = self.chunks.filter(done_at__isnull=True, heartbeat_at__gte=timezone.now() - stall_after())
        return None if in_progress.exists() or last >= timezone.now() - stall_after() else last


class WorkerHeartbeat(models.Model):
    """A worker's answer to a worker check: who took the queue's task and what it can run."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="heartbeats")
    queue = models.CharField(max_length=50)
    hostname = models.CharField(max_length=200)
    pid = models.PositiveIntegerField()
    torch_version = models.CharField(max_length=50, blank=True)
    cuda_available = models.BooleanField(default=False)
    device_name = models.CharField(max_length=200, blank=True)
    latency_ms = models.PositiveIntegerField()
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["queue"]
        constraints = [models.UniqueConstraint(fields=["job", "queue"], name="one_heartbeat_per_queue_and_check")]

    def __str__(self) -> str:
        return f"{self.queue} answered by {self.hostname}"


class JobChunk(models.Model):
    """A slice of a job's work (prompts, or debates): the unit one worker takes, retries and resumes.

    A worker on it beats `heartbeat_at` every few seconds; a chunk whose heartbeat stops is
    sent back to the queue by whoever notices (evalhub.jobs.chunks.do_requeue_stalled_chunks)."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    unit_ids = models.JSONField(help_text="The ids this chunk works on: prompts, or debates for a debate run.")
    units_planned = models.PositiveIntegerField(default=0, help_text="Progress units this chunk accounts for.")
    units_failed = models.PositiveIntegerField(default=0)
    first_error = models.CharField(max_length=1000, blank=True, help_text="The cause of its first failed unit.")
    attempts = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True, help_text="host:pid of the worker on it now.")
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    # When its message last went to the broker, on which queue, and when a worker last took it: a chunk
    # sent and never taken (its message lost) is sent again (evalhub.jobs.chunks.do_resend_unclaimed_chunks).
    queue = models.CharField(max_length=50, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [models.UniqueConstraint(fields=["job", "index"], name="one_chunk_per_job_index")]

    def __str__(self) -> str:
        return f"chunk {self.index + 1} of job {self.job_id}"
