"""What the job page shows for each kind of job, registered by the app that owns the kind.

An app calls `register(kind, run_attr=…, results=…, resume=…)` in its AppConfig.ready; the job
page then loads the results partial and, for admins, offers Resume (which calls the kind's
resume action) without the jobs app importing any other app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.urls import reverse


@dataclass(frozen=True)
class JobKind:
    run_attr: str  # the one-to-one accessor from Job to the kind's run
    results: str  # url name of the results partial, taking the run's pk
    resume: Callable[[Any], Any]  # the action that re-enqueues the run's unfinished chunks


KINDS: dict[str, JobKind] = {}


def register(kind: str, *, run_attr: str, results: str, resume: Callable[[Any], Any]) -> None:
    KINDS[kind] = JobKind(run_attr, results, resume)


def run_of(job) -> tuple[JobKind, Any] | tuple[None, None]:
    kind = KINDS.get(job.kind)
    run = getattr(job, kind.run_attr, None) if kind else None
    return (kind, run) if run is not None else (None, None)


def links(job) -> dict[str, str]:
    """{"results": url, "resume": url} for a job of a registered kind that has its run, else {}."""
    kind, run = run_of(job)
    if run is None:
        return {}
    return {"results": reverse(kind.results, args=[run.pk]), "resume": reverse("resume_job", args=[job.pk])}
