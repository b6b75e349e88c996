"""Jobs through the API: follow one (state, progress, usage) and pause, resume or cancel it, by the
rules the job page applies (a person may stop the jobs they started; an admin any, and only an admin
resumes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.shortcuts import get_object_or_404
from ninja import Router, Schema
from ninja.errors import HttpError
from ninja.pagination import LimitOffsetPagination, paginate

from evalhub.accounts.models import Scope
from evalhub.accounts.roles import ADMIN
from evalhub.api.access import allowed
from evalhub.jobs.actions import do_request_stop
from evalhub.jobs.chunks import do_resume_job
from evalhub.jobs.kinds import run_of
from evalhub.jobs.models import Job, StopRequest
from evalhub.jobs.views import may_stop

router = Router(tags=["jobs"])


class JobOut(Schema):
    id: int
    kind: str
    title: str
    status: str
    status_words: str
    finished: bool
    progress_done: int
    progress_total: int
    percent: int
    message: str
    error: str
    units_failed: int
    units_invalid: int
    usage: dict[str, Any]
    created_by: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    url: str

    @staticmethod
    def resolve_created_by(job: Job) -> str | None:
        return job.created_by.get_username() if job.created_by is not None else None

    @staticmethod
    def resolve_url(job: Job) -> str:
        return job.get_absolute_url()


@router.get("/jobs", response=list[JobOut], auth=allowed())
@paginate(LimitOffsetPagination)
def list_jobs(request, kind: str = "", status: str = ""):
    """Jobs, newest first; `kind` and `status` narrow them."""
    jobs = Job.objects.select_related("created_by").order_by("-pk")
    if kind:
        jobs = jobs.filter(kind=kind)
    if status:
        jobs = jobs.filter(status=status)
    return jobs


@router.get("/jobs/{job_id}", response=JobOut, auth=allowed())
def get_job(request, job_id: int):
    """One job's state, progress and usage: what a pipeline polls until `finished`."""
    return get_object_or_404(Job.objects.select_related("created_by"), pk=job_id)


def _stop(request, job_id: int, what: str) -> Job:
    job = get_object_or_404(Job, pk=job_id)
    if not may_stop(request.user, job):
        raise HttpError(403, "only an admin or the person who started a job may stop it")
    return do_request_stop(job, what)


@router.post("/jobs/{job_id}/pause", response=JobOut, auth=allowed(scope=Scope.WRITE))
def pause_job(request, job_id: int):
    """Pause: workers stop between calls; what was stored is kept, and resume goes on from there."""
    return _stop(request, job_id, StopRequest.PAUSE)


@router.post("/jobs/{job_id}/cancel", response=JobOut, auth=allowed(scope=Scope.WRITE))
def cancel_job(request, job_id: int):
    """Cancel: as pause, but the job ends cancelled."""
    return _stop(request, job_id, StopRequest.CANCEL)


@router.post("/jobs/{job_id}/resume", response=JobOut, auth=allowed(ADMIN, scope=Scope.WRITE))
def resume_job(request, job_id: int):
    """Run again what produced no result (a paused, cancelled, failed or stalled job's units)."""
    job = get_object_or_404(Job, pk=job_id)
    if run_of(job)[1] is None:
        raise HttpError(404, "this kind of job cannot be resumed")
    return do_resume_job(job)
