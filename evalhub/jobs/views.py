from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from evalhub.accounts.roles import ADMIN, has_role, role_required
from evalhub.jobs.actions import do_expire_worker_check, do_request_cancel, do_start_worker_check
from evalhub.jobs.kinds import links, run_of
from evalhub.jobs.models import Job


@role_required()
def job_list(request):
    jobs = Job.objects.select_related("created_by")
    page = Paginator(jobs, 50).get_page(request.GET.get("page"))
    return render(request, "jobs/job_list.html", {"page": page})


@role_required()
def job_detail(request, pk: int):
    job = do_expire_worker_check(get_object_or_404(Job, pk=pk))
    template = "jobs/_job_status.html" if request.htmx else "jobs/job_detail.html"
    job_links = links(job)
    can_resume = bool(job_links) and job.status in ("failed", "cancelled") and has_role(request.user, ADMIN)
    return render(request, template, {"job": job, "links": job_links, "can_resume": can_resume})


@role_required(ADMIN)
@require_POST
def start_worker_check(request):
    return redirect(do_start_worker_check(request.user))


@role_required()
@require_POST
def cancel_job(request, pk: int):
    job = get_object_or_404(Job, pk=pk)
    if not (has_role(request.user, ADMIN) or job.created_by_id == request.user.id):
        raise PermissionDenied
    job = do_request_cancel(job)
    if request.htmx:
        return render(request, "jobs/_job_status.html", {"job": job})
    return redirect(job)


@role_required(ADMIN)
@require_POST
def resume_job(request, pk: int):
    job = get_object_or_404(Job, pk=pk)
    kind, run = run_of(job)
    if run is None:
        raise Http404("This kind of job cannot be resumed.")
    kind.resume(run)
    return redirect(job)
