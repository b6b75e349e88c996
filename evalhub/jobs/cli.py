"""What the run commands share: work a job's chunks in this process, or follow a job worked elsewhere,
with a progress bar on a terminal (units done / total, rate, time left; nothing when the output is not
a terminal), and end with its state."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from django.core.management.base import BaseCommand, CommandError

from evalhub.jobs.actions import job_changed
from evalhub.jobs.chunks import pending_chunk_ids
from evalhub.jobs.models import FINISHED, Job, JobStatus
from evalhub.jobs.runners import work_chunk


@contextmanager
def progress_bar(job: Job, *, shown: bool | None = None, stream: IO[str] | None = None) -> Iterator[Any]:
    """A bar that moves as the job's progress is broadcast in this process (`job_changed`); yields it
    (None where it is not shown: `shown` None shows it on a terminal only)."""
    from tqdm import tqdm  # a command's import, not a web process's

    stream = stream or sys.stderr
    if not (stream.isatty() if shown is None else shown):
        yield None
        return
    bar = tqdm(total=job.progress_total or None, desc=job.title[:40], unit="unit", file=stream, dynamic_ncols=True)

    def moved(sender: Any, job: Job, **kwargs: Any) -> None:
        if job.pk == watched:
            _draw(bar, job)

    watched = job.pk
    job_changed.connect(moved, weak=False, dispatch_uid=f"progress-bar-{watched}")
    try:
        _draw(bar, job)
        yield bar
    finally:
        job_changed.disconnect(dispatch_uid=f"progress-bar-{watched}")
        _draw(bar, Job.objects.get(pk=watched))
        bar.close()


def _draw(bar: Any, job: Job) -> None:
    bar.total = job.progress_total or bar.total
    bar.n = job.progress_done
    bar.set_postfix_str(job.status_words, refresh=False)
    bar.refresh()


def work_here(job: Job, *, shown: bool | None = None, stream: IO[str] | None = None) -> Job:
    """Run the job's unfinished chunks in this process (the code the workers run) and reread it."""
    with progress_bar(job, shown=shown, stream=stream):
        for chunk_id in pending_chunk_ids(job):
            work_chunk(chunk_id)
    return Job.objects.get(pk=job.pk)


def follow(job: Job, *, poll: float = 2.0, shown: bool | None = None, stream: IO[str] | None = None) -> Job:
    """Wait for a job worked anywhere (the workers, another machine) to finish, reading its state every
    `poll` seconds, with the bar; the finished job, or the paused one (nothing moves it until a resume)."""
    with progress_bar(job, shown=shown, stream=stream) as bar:
        while job.status not in FINISHED and job.status != JobStatus.PAUSED:
            time.sleep(poll)
            job = Job.objects.get(pk=job.pk)
            if bar is not None:
                _draw(bar, job)
    return job


def add_follow_argument(parser: Any) -> None:
    parser.add_argument(
        "--follow", action="store_true", help="With --enqueue: follow the queued job to its end, with its progress."
    )


def report_state(command: BaseCommand, job: Job, label: str) -> None:
    """The job's state in the words every page uses; a failed job ends the command with exit status 1."""
    line = f"{label}: {job.status_words}. {job.message}"
    if job.status == JobStatus.FAILED:
        raise CommandError(line)
    style = command.style.SUCCESS if job.status == JobStatus.SUCCEEDED else command.style.WARNING
    command.stdout.write(style(line))
