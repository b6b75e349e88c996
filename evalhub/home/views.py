from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.db.models import Count, Q
from django.http import JsonResponse
from django.shortcuts import render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.http import require_GET

from evalhub.accounts.roles import ADMIN, READERS, has_role
from evalhub.adjudication.demo import SIMULATED_PEOPLE
from evalhub.adjudication.models import Adjudication, AdjudicationItem, ItemStatus
from evalhub.catalog.models import Benchmark, DataImport, Judgment, LanguageModel, Prompt, Response
from evalhub.debates.models import Debate, DebateRun, DebateTurn, JudgeRun, JudgeVerdict
from evalhub.jobs.models import Job, JobStatus
from evalhub.scoring.models import DiscernmentRun, GemRun, JudgeScore
from evalhub.system.row_counts import row_count, total


@dataclass(frozen=True)
class NextStep:
    title: str
    done: bool
    url: str
    how: str


def next_steps(waiting: int) -> list[NextStep]:
    """The first hour's path (import → debate → adjudicate → score → read the boards), each step
    marked done from what is stored: a started run (not a draft), a stored verdict, a scoring run
    that succeeded (one that failed or was cancelled scored nothing to read)."""
    started_debates = DebateRun.objects.filter(job__isnull=False).exists()
    scored = any(
        kind.objects.filter(job__status=JobStatus.SUCCEEDED).exists() for kind in (GemRun, DiscernmentRun, JudgeRun)
    )
    return [
        NextStep(
            "Import a benchmark",
            Benchmark.objects.exists(),
            reverse("import_benchmark"),
            "JSONL, CSV or Parquet, one row per response; or python manage.py import_benchmark FILE.",
        ),
        NextStep(
            "Start a debate run",
            started_debates,
            reverse("debate_run_create"),
            "Agents debate which of two models' responses is better; turns stream live.",
        ),
        NextStep(
            "Adjudicate what the agents did not settle",
            Adjudication.objects.exclude(user__username__in=SIMULATED_PEOPLE).exists(),  # done by a real person
            reverse("adjudication_queue"),
            f"{waiting} item{pluralize(waiting)} waiting; keys 1, 2, 0 and s.",
        ),
        NextStep(
            "Score without a gold standard, or test a judge",
            scored,
            reverse("gem_create"),
            "GEM / GRE-bench, DHP discernment, YESciEval, single judges.",
        ),
        NextStep(
            "Read the boards",
            False,  # reading is never "done"
            reverse("leaderboards"),
            "Pairwise ratings with intervals, GRE-bench, and how far to trust each judge.",
        ),
    ]


def home(request):
    context: dict[str, Any] = {"outsider": not has_role(request.user), "blind": not has_role(request.user, *READERS)}
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
                # Every verdict or score stored: imported, debate turns, single judges, DHP / YESciEval;
                # estimated where a table is large (evalhub.system.row_counts).
                "judgments": total(*(row_count(table) for table in (Judgment, DebateTurn, JudgeVerdict, JudgeScore))),
                **job_counts,
            },
            benchmarks=Benchmark.objects.annotate(n=Count("prompts")).order_by("-created_at")[:6],
            jobs=Job.objects.select_related("created_by")[:6],
            imports=DataImport.objects.select_related("benchmark", "imported_by")[:5],
            debate_runs=DebateRun.objects.select_related("job").order_by("-created_at")[:5],
            debates=Debate.objects.count(),
            adjudication_waiting=AdjudicationItem.objects.filter(status=ItemStatus.OPEN).count(),
        )
        if has_role(request.user, ADMIN):  # the steps link to admin pages; other readers are not shown them
            context["next_steps"] = next_steps(context["adjudication_waiting"])
    return render(request, "home/home.html", context)


@login_not_required
@require_GET
def healthz(request):
    """For load balancers and docker healthchecks: are the database and Redis reachable? Each says
    "ok", the error's type, or (Redis in the embedded mode) "not used"."""
    checks = {"database": _database_check(), "redis": _redis_check()}
    healthy = all(state in ("ok", "not used") for state in checks.values())
    return JsonResponse({"status": "ok" if healthy else "error", **checks}, status=200 if healthy else 503)


def _database_check() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # report, don't raise: a health check answers
        return type(error).__name__
    return "ok"


def _redis_check() -> str:
    if not settings.REDIS_URL:
        return "not used"
    import redis

    # A client of its own with short timeouts: the cache's pooled client waits its pool's 20 s when busy,
    # and a health check must answer within the container check's 5 s.
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as error:  # report, don't raise
        return type(error).__name__
    return "ok"
