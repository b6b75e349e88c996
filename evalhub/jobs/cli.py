"""What the run commands share: work a job's chunks in this process, and end with its state."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evalhub.jobs.chunks import pending_chunk_ids
from evalhub.jobs.models import Job, JobStatus
from evalhub.jobs.runners import work_chunk


def work_here(job: Job) -> Job:
    """Run the job's unfinished chunks in this process (the code the workers run) and reread it."""
    for chunk_id in pending_chunk_ids(job):
        work_chunk(chunk_id)
    return Job.objects.get(pk=job.pk)


def report_state(command: BaseCommand, job: Job, label: str) -> None:
    """The job's state in the words every page uses; a failed job ends the command with exit status 1."""
    line = f"{label}: {job.status_words}. {job.message}"
    if job.status == JobStatus.FAILED:
        raise CommandError(line)
    style = command.style.SUCCESS if job.status == JobStatus.SUCCEEDED else command.style.WARNING
    command.stdout.write(style(line))
