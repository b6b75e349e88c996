from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, Min
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from evalhub.accounts.roles import ADMIN, has_role, role_required
from evalhub.core.runs.usage import Usage
from evalhub.jobs.actions import do_expire_worker_check, do_request_stop, do_start_worker_check
from evalhub.jobs.chunks import do_requeue_stalled_chunks, do_resend_unclaimed_chunks, do_resume_job, unclaimed_chunks
from evalhub.jobs.kinds import configuration, results_url, run_of
from evalhub.jobs.models import Job, StopRequest
from evalhub.system.downloads import download


@role_required()
def job_list(request):
    jobs = Job.objects.select_related("created_by")
    page = Paginator(jobs, 50).get_page(request.GET.get("page"))
    return render(request, "jobs/job_list.html", {"page": page})


USAGE_FORMATS = ("csv", "json")


@role_required()
def usage_export(request, fmt: str):
    """Every job's calls, cached calls, input, output and reasoning tokens and cost, one row a job: what
    a team reconciles with its provider's bill."""
    if fmt not in USAGE_FORMATS:
        raise Http404("usage is exported as CSV or JSON")
    jobs = Job.objects.order_by("pk").values_list("pk", "kind", "title", "status", "created_at", "usage")
    rows = [
        {
            "job": pk,
            "kind": kind,
            "title": title,
            "status": status,
            "created": created,
            **Usage.from_dict(usage).as_dict(),
        }
        for pk, kind, title, status, created, usage in jobs.iterator(chunk_size=2000)
    ]
    return download(rows, fmt, "job-usage")


@role_required()
def job_detail(request, pk: int):
    job = get_object_or_404(Job, pk=pk)
    if request.htmx:
        return render(request, "jobs/_job_status.html", {"job": job, "results_url": results_url(job)})
    context = {"job": job, "results_url": results_url(job), "configuration": configuration(job)}
    return render(request, "jobs/job_detail.html", context)


@role_required()
@require_POST
def check_job(request, pk: int):
    """What the job page asks as it opens (a GET writes nothing): a worker check whose time is up is
    closed, and chunks whose workers stopped beating go back to the queue now, even when no worker's
    watchdog is alive to notice."""
    job = do_expire_worker_check(get_object_or_404(Job, pk=pk))
    if do_requeue_stalled_chunks(job) + do_resend_unclaimed_chunks(job):
        job.refresh_from_db()
    return render(request, "jobs/_job_status.html", {"job": job, "results_url": results_url(job)})


def may_stop(user, job: Job) -> bool:
    return has_role(user, ADMIN) or job.created_by_id == user.id


@role_required()
def job_controls(request, pk: int):
    """The buttons that apply to the job now, for this user (the status fragment loads them)."""
    job = get_object_or_404(Job, pk=pk)
    context = {
        "job": job,
        "may_stop": may_stop(request.user, job),
        "may_resume": has_role(request.user, ADMIN) and run_of(job)[1] is not None,
        "stalled_since": job.stalled_since(),
        "waiting": unclaimed_chunks(job).aggregate(chunks=Count("pk"), since=Min("sent_at")),
    }
    return render(request, "jobs/_job_controls.html", context)


@role_required()
@require_POST
def stop_job(request, pk: int, what: str):
    job = get_object_or_404(Job, pk=pk)
    if what not in (StopRequest.PAUSE, StopRequest.CANCEL):
        raise Http404
    if not may_stop(request.user, job):
        raise PermissionDenied
    job = do_request_stop(job, what)
    if request.htmx:
        return render(request, "jobs/_job_status.html", {"job": job, "results_url": results_url(job)})
    return redirect(job)


@role_required()
@require_POST
def cancel_job(request, pk: int):
    return stop_job(request, pk, StopRequest.CANCEL)


@role_required(ADMIN)
@require_POST
def resume_job(request, pk: int):
    job = get_object_or_404(Job, pk=pk)
    if run_of(job)[1] is None:
        raise Http404("This kind of job cannot be resumed.")
    job = do_resume_job(job)
    if request.htmx:  # the card updates where it is (a debate run's page stays that page)
        return render(request, "jobs/_job_status.html", {"job": job, "results_url": results_url(job)})
    return redirect(job)


@role_required(ADMIN)
@require_POST
def start_worker_check(request):
    return redirect(do_start_worker_check(request.user))
