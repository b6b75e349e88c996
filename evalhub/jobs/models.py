"""Background jobs: one row per job with its status and progress, shared by every kind."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)


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
    cancel_requested = models.BooleanField(default=False)
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
        return f"job.{self.pk}"

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == JobStatus.SUCCEEDED else 0
        return min(100, round(100 * self.progress_done / self.progress_total))


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
    """A slice of a job's prompts: the unit one worker takes, retries and resumes (GEM, DHP…)."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    prompt_ids = models.JSONField()
    units_planned = models.PositiveIntegerField(default=0, help_text="Progress units this chunk accounts for.")
    attempts = models.PositiveIntegerField(default=0)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [models.UniqueConstraint(fields=["job", "index"], name="one_chunk_per_job_index")]

    def __str__(self) -> str:
        return f"chunk {self.index + 1} of job {self.job_id}"
