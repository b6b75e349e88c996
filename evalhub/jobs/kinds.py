"""The kinds of long work, registered by the app that owns each kind.

An app calls `register(kind, …)` in its AppConfig.ready with what the jobs app cannot know
without importing it: the one-to-one accessor from Job to the kind's run, the url name of its
results partial, the Celery task (by name) that works one chunk, and the queue a run's chunks go
to. Pause, resume, cancel, retry-failed, the stall check and the job page are then the same for
every kind, without the jobs app importing any other app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.urls import reverse


@dataclass(frozen=True)
class JobKind:
    run_attr: str  # the one-to-one accessor from Job to the kind's run
    results: str  # url name of the results partial, taking the job's id (the id its pages show)
    task: str  # Celery task name; takes one chunk id
    queue: Callable[[Any], str]  # the queue a run's chunks go to
    on_change: Callable[[Any], None] | None = None  # live updates of the run's own pages when the job changes


KINDS: dict[str, JobKind] = {}


def register(
    kind: str,
    *,
    run_attr: str,
    results: str,
    task: str,
    queue: Callable[[Any], str],
    on_change: Callable[[Any], None] | None = None,
) -> None:
    KINDS[kind] = JobKind(run_attr, results, task, queue, on_change)


def run_of(job: Any) -> tuple[JobKind, Any] | tuple[None, None]:
    kind = KINDS.get(job.kind)
    run = getattr(job, kind.run_attr, None) if kind else None
    return (kind, run) if kind is not None and run is not None else (None, None)


def results_url(job: Any) -> str:
    """The url of the job's results partial, or "" for a job without a registered run."""
    kind, _run = run_of(job)
    return reverse(kind.results, args=[job.pk]) if kind is not None else ""
