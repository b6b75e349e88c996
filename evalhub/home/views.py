from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.db.models import Count, Q
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from evalhub.accounts.roles import READERS, has_role
from evalhub.adjudication.models import AdjudicationItem, ItemStatus
from evalhub.catalog.models import Benchmark, DataImport, Judgment, LanguageModel, Prompt, Response
from evalhub.debates.models import Debate, DebateRun, DebateTurn, JudgeVerdict
from evalhub.jobs.models import Job, JobStatus
from evalhub.scoring.models import JudgeScore


def home(request):
    context = {"outsider": not has_role(request.user), "blind": not has_role(request.user, *READERS)}
    if not context["blind"]:
        job_counts = Job.objects.aggregate(
            running=Count("id", filter=Q(status=JobStatus.RUNNING)),
            queued=Count("id", filter=Q(status=JobStatus.QUEUED)),
            failed=Count("id", filter=Q(status=JobStatus.FAILED)),
        )
        context.update(
            counts={
                "benchmarks": Benchmark.objects.count(),
                "prompts": Prompt.objects.count(),
                "responses": Response.objects.filter(parent__isnull=True).count(),
                "models": LanguageModel.objects.count(),
                # Every verdict or score stored: imported, debate turns, single judges, DHP / YESciEval.
                "judgments": Judgment.objects.count()
                + DebateTurn.objects.count()
                + JudgeVerdict.objects.count()
                + JudgeScore.objects.count(),
                **job_counts,
            },
            benchmarks=Benchmark.objects.annotate(n=Count("prompts")).order_by("-created_at")[:6],
            jobs=Job.objects.select_related("created_by")[:6],
            imports=DataImport.objects.select_related("benchmark", "imported_by")[:5],
            debate_runs=DebateRun.objects.select_related("job").order_by("-created_at")[:5],
            debates=Debate.objects.count(),
            adjudication_waiting=AdjudicationItem.objects.filter(status=ItemStatus.OPEN).count(),
        )
    return render(request, "home/home.html", context)


@login_not_required
@require_GET
def healthz(request):
    """For load balancers and docker healthchecks: is the database reachable?"""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # report, don't raise: a health check answers
        return JsonResponse({"status": "error", "database": type(error).__name__}, status=503)
    return JsonResponse({"status": "ok"})
