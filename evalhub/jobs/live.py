"""The live fragments of the jobs app, by name: a job's status card, at `job.<id>`."""

from __future__ import annotations

from django.template.loader import render_to_string

from evalhub.jobs.kinds import results_url


def job_group(job_id: int) -> str:
    return f"job.{job_id}"


def job_status(job) -> str:
    """State, progress, pace, usage and the slot its controls load into (they depend on the viewer)."""
    return render_to_string("jobs/_job_status.html", {"job": job, "oob": True, "results_url": results_url(job)})
