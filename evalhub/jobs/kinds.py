"""What the job page shows for each kind of job, registered by the app that owns the kind.

An app calls `register(kind, run_attr=…, results=…, resume=…)` in its AppConfig.ready; the job
page then loads the results partial (and, for admins, offers Resume) without the jobs app
importing any other app.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse


@dataclass(frozen=True)
class JobKind:
    run_attr: str  # the one-to-one accessor from Job to the kind's run
    results: str  # url name of the results partial, taking the run's pk
    resume: str  # url name of the resume POST


KINDS: dict[str, JobKind] = {}


def register(kind: str, *, run_attr: str, results: str, resume: str) -> None:
    KINDS[kind] = JobKind(run_attr, results, resume)


def links(job) -> dict[str, str]:
    """{"results": url, "resume": url} for a job of a registered kind that has its run, else {}."""
    kind = KINDS.get(job.kind)
    run = getattr(job, kind.run_attr, None) if kind else None
    if run is None:
        return {}
    return {"results": reverse(kind.results, args=[run.pk]), "resume": reverse(kind.resume, args=[run.pk])}
