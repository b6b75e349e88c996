from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from evalhub.accounts.roles import ADMIN, has_role, role_required
from evalhub.debates import live
from evalhub.debates.actions import (
    RunRejected,
    do_create_judge_run,
    do_create_run,
    do_start_run,
    failure_groups,
    listed_runs,
    run_counts,
    run_debates_page,
)
from evalhub.debates.forms import DebateRunForm, JudgeRunForm
from evalhub.debates.judging import meta_evaluation
from evalhub.debates.models import Debate, DebateRun, JudgeRun
from evalhub.debates.visibility import turns_withheld
from evalhub.jobs.actions import do_request_stop


@role_required()
def debate_index(request):
    return render(request, "debates/index.html", {"rows": listed_runs()})


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def run_create(request):
    form = DebateRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            run = do_create_run(request.user, **form.run_fields())
        except RunRejected as error:
            form.add_error(None, str(error))
        else:
            if form.cleaned_data["start"]:
                do_start_run(run)
            messages.success(request, f"Created {run.name} with {run.debates.count()} debates.")
            return redirect(run)
    return render(request, "debates/run_form.html", {"form": form}, status=400 if form.errors else 200)


@role_required()
def run_detail(request, pk: int):
    run = get_object_or_404(
        DebateRun.objects.select_related("benchmark", "criterion", "model_a", "model_b", "job"), pk=pk
    )
    page = run_debates_page(run, request.GET.get("page"))
    return render(request, "debates/run_detail.html", {"run": run, "counts": run_counts(run), "page": page})


@role_required()
def run_results(request, pk: int):
    """What a debate run's job page shows under its status: the run's live summary (by job id)."""
    run = get_object_or_404(DebateRun.objects.select_related("job"), job_id=pk)
    context = {"run": run, "counts": run_counts(run), "failures": failure_groups(run)}
    return render(request, "debates/_run_results.html", context)


@role_required()
def judge_run_results(request, pk: int):
    run = get_object_or_404(JudgeRun.objects.select_related("reference", "job"), job_id=pk)
    failures = run.job.chunks.filter(units_failed__gt=0).order_by("index") if run.job is not None else []
    return render(request, "debates/_judge_run_results.html", {"judge_run": run, "failures": failures})


@role_required(ADMIN)
@require_POST
def run_control(request, pk: int, action: str):
    """Start a draft; pause, cancel and resume are the job's (the same controls as every job)."""
    run = get_object_or_404(DebateRun.objects.select_related("job"), pk=pk)
    if action == "start" and run.is_draft or action == "resume" and run.job and run.job.can_resume:
        do_start_run(run)
    elif action in {"pause", "cancel"} and run.job:
        do_request_stop(run.job, action)
    else:
        messages.error(request, f"{action.capitalize()} does not apply to this run now.")
    return redirect(run)


@role_required()
def debate_detail(request, pk: int):
    debate = get_object_or_404(
        Debate.objects.select_related(
            "run__criterion",
            "run__model_a",
            "run__model_b",
            "prompt__benchmark",
            "response_a__model",
            "response_b__model",
        ).prefetch_related("turns"),
        pk=pk,
    )
    if reason := turns_withheld(request.user, debate.pk):
        return render(request, "debates/withheld.html", {"reason": reason}, status=403)
    first, second = debate.shown
    context = {
        "debate": debate,
        "run": debate.run,
        "first": first,
        "second": second,
        # Which model wrote which submission: admins only (adjudicators judge blind).
        "reveal": has_role(request.user, ADMIN),
        "privileged": debate.prompt.privileged_information(),
        "transcript": live.transcript(debate),
    }
    return render(request, "debates/debate_detail.html", context)


@role_required()
@require_http_methods(["GET", "POST"])
def run_judges(request, pk: int):
    """Meta-evaluation: single judges against the debate-plus-human reference (ScaleEval, Section 5)."""
    run = get_object_or_404(DebateRun.objects.select_related("criterion"), pk=pk)
    form = JudgeRunForm(request.POST or None)
    if request.method == "POST":
        if not has_role(request.user, ADMIN):
            raise PermissionDenied
        if form.is_valid():
            judge_run = do_create_judge_run(request.user, reference=run, **form.cleaned_data)
            messages.success(request, f"Started judge run {judge_run}.")
            return redirect("debate_run_judges", pk=run.pk)
    reports, with_reference, waiting = meta_evaluation(run)
    context = {"run": run, "form": form, "reports": reports, "with_reference": with_reference, "waiting": waiting}
    return render(request, "debates/judges.html", context, status=400 if form.errors else 200)
