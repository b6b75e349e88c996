"""The live fragments of the jobs app, by name: a job's status card, at `job.<id>` on the job's own page
and at `job.<id>.embedded` where another page shows the card (a debate run's page)."""

from __future__ import annotations

from django.template.loader import render_to_string

from evalhub.jobs.kinds import results_url


def job_group(job_id: int, embedded: bool = False) -> str:
    return f"job.{job_id}.embedded" if embedded else f"job.{job_id}"


def job_status(job, embedded: bool = False) -> str:
    """State, progress, pace, usage and the slot its controls load into (they depend on the viewer).
    On the job's page a finished job also loads its results into the page's results slot; a page that
    embeds the card has no such slot (htmx would log a target error), so its card loads none."""
    url = "" if embedded else results_url(job)
    return render_to_string("jobs/_job_status.html", {"job": job, "oob": True, "results_url": url})
