from __future__ import annotations

import copy
import functools
import json
from dataclasses import asdict, fields
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_http_methods

from evalhub.accounts.roles import ADMIN, may_open, role_required
from evalhub.catalog.actions.importing import ImportRejected, check_import_size
from evalhub.catalog.imported_pages import pages_showing, pages_showing_scores
from evalhub.catalog.inspect_logs import InspectMissing
from evalhub.catalog.judgment_preview import PREVIEW_HEADERS as JUDGMENT_PREVIEW_HEADERS
from evalhub.catalog.judgment_preview import preview_judgment_file
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.catalog.score_preview import PREVIEW_HEADERS as SCORE_PREVIEW_HEADERS
from evalhub.catalog.score_preview import preview_score_file
from evalhub.core.charts import bias_chart, reliability_chart
from evalhub.core.files.judgments import AUTO
from evalhub.core.files.tables import to_text
from evalhub.core.judge_lab.measures import CONFUSION_COLUMNS, CONFUSION_ROWS
from evalhub.core.judge_lab.protocol import Thresholds, consistent_but_biased, protocol
from evalhub.core.judge_lab.report_types import (
    CORRECTED_COLUMNS,
    KINDS,
    MODEL,
    PANEL,
    Report,
    alt_test_json,
    corrected_rows,
    summary_row,
)
from evalhub.core.statistics.alt_test import DEFAULT_EPSILON, NUMERIC, alt_test_of
from evalhub.core.statistics.corrected_ratings import CorrectedBoard
from evalhub.core.statistics.estimators import Correction, choices
from evalhub.core.statistics.pointwise import MIN_PROMPTS, MIN_SYSTEMS
from evalhub.debates.models import DebateRun
from evalhub.judgelab.forms import JudgmentImportForm, ScoreImportForm
from evalhub.judgelab.graded import csv_rows, graded_table, rho_chart
from evalhub.judgelab.pointwise import export_rows as pointwise_export_rows
from evalhub.judgelab.pointwise import item_chart, pointwise_report, scored_benchmarks
from evalhub.judgelab.report import (
    BY_RULE,
    Freshness,
    ReportNotReady,
    judge_key,
    model_as_judge,
    report_with_freshness,
)
from evalhub.reads.caching import cached, fingerprint
from evalhub.reads.judged_pairs import BLIND, PEOPLES_VERDICTS, Scope
from evalhub.reads.provenance import stand_in_specs
from evalhub.system.downloads import download, not_ready

SORTS = {
    "kappa": lambda r: (r.kappa.value is None, -(r.kappa.value or 0)),
    "agreement": lambda r: (r.agreement.value is None, -(r.agreement.value or 0)),
    "n": lambda r: -r.n,
    "position": lambda r: (r.position.value is None, r.position.value or 0),
    "longer": lambda r: (r.longer_share is None, -(r.longer_share or 0)),
    "ece": lambda r: (r.calibration is None, r.calibration.ece if r.calibration else 0),
    "name": lambda r: r.judge.name,
}
MAX_ERRORS_SHOWN = 50


def _scope(request) -> Scope:
    people = request.GET.get("people", BLIND)
    return Scope(
        benchmark=request.GET.get("benchmark", ""),
        criterion=request.GET.get("criterion", ""),
        people=people if people in PEOPLES_VERDICTS else BLIND,
        train_pairs=request.GET.get("improved") == "all",
    )


def _correction(request) -> Correction:
    """The corrected boards' estimator the query asks for (evalhub's rule where it names none it knows)."""
    return Correction.asked(request.GET.get("estimator", ""))[0]


def _report(request, *, wait: bool = False) -> tuple[Report, Freshness]:
    return report_with_freshness(_scope(request), wait=wait, correction=_correction(request))


def answers_while_computed(export):
    """An export of the report of the data as it is: while a worker computes it at scale, 503 with
    Retry-After (evalhub.system.downloads.not_ready), never minutes in the request."""

    @functools.wraps(export)
    def answering(request, *args, **kwargs):
        try:
            return export(request, *args, **kwargs)
        except ReportNotReady as waiting:
            return not_ready("judge report", "the judge lab's report", waiting.asked, waiting.computed_at)

    return answering


def scope_query(scope: Scope, correction: Correction = BY_RULE) -> str:
    given = (("benchmark", scope.benchmark), ("criterion", scope.criterion))
    query = {key: value for key, value in given if value}
    query |= {} if scope.people == BLIND else {"people": scope.people}
    query |= {"improved": "all"} if scope.train_pairs else {}
    return urlencode(query | ({} if correction.by_rule else {"estimator": correction.estimator}))


def _estimator_control(request) -> dict:
    """What the corrected boards' Estimator control shows: the choices, the one asked, and an error
    where the query named an unknown one."""
    asked, error = Correction.asked(request.GET.get("estimator", ""))
    return {"estimator_choices": choices(), "estimator": asked.estimator, "estimator_error": error}


@role_required()
def judge_list(request):
    scope, correction = _scope(request), _correction(request)
    report, freshness = report_with_freshness(scope, correction=correction)
    sort = request.GET.get("sort", "kappa")
    judges = sorted(report.judges, key=SORTS.get(sort, SORTS["kappa"]))
    context = {
        "report": report,
        "freshness": freshness,
        "judges": [(judge_key(r.judge.id), r) for r in judges],
        "scope": scope,
        "sort": sort if sort in SORTS else "kappa",
        "benchmarks": Benchmark.objects.order_by("slug").values_list("slug", flat=True),
        "criteria": Criterion.objects.order_by("slug").values_list("slug", flat=True),
        "query": request.GET.urlencode(),
        "scope_query": scope_query(scope, correction),
        "peoples_verdicts": PEOPLES_VERDICTS,
        "blind_first_runs": blind_first_runs(scope),
        "stand_ins": stand_in_specs(),
    }
    return render(request, "judgelab/judge_list.html", context)


def blind_first_runs(scope: Scope):
    """The debate runs in scope whose people gave blind verdicts: each page shows how much the aid moved them."""
    runs = DebateRun.objects.filter(debates__adjudication_item__adjudications__blind__isnull=False)
    if scope.benchmark:
        runs = runs.filter(benchmark__slug=scope.benchmark)
    if scope.criterion:
        runs = runs.filter(criterion__slug=scope.criterion)
    return runs.distinct().order_by("-id").values("pk", "name")[:20]


def _find(request, key: str, *, wait: bool = False):
    judge, _ = _find_with_freshness(request, key, wait=wait)
    if judge is None:
        raise Http404("No judge with this id in this scope.")
    return judge


def _find_with_freshness(request, key: str, *, wait: bool = False):
    """The judge and the report's freshness; None for a judge the kept report predates (the latest
    data add it). Raises Http404 for a judge the current report does not hold."""
    report, freshness = _report(request, wait=wait)
    for judge in report.judges:
        if judge_key(judge.judge.id) == key:
            return judge, freshness
    if not freshness.current:
        return None, freshness
    raise Http404("No judge with this id in this scope.")


@role_required()
def judge_detail(request, key: str):
    judge, freshness = _find_with_freshness(request, key)
    if judge is None:
        # No report yet is no missing page (a worker is computing it); a judge a kept report predates may be
        # one the latest data add, or none at all: not found until the current report says.
        status = 200 if freshness.computed_at is None else 404
        return render(request, "judgelab/judge_pending.html", {"freshness": freshness}, status=status)
    thresholds = Thresholds.of(request.GET)
    context = {
        "freshness": freshness,
        "r": judge,
        "key": key,
        "kind": KINDS[judge.judge.kind],
        "confusion": list(zip(CONFUSION_ROWS, judge.confusion, strict=True)),
        "columns": CONFUSION_COLUMNS,
        "reliability": reliability_chart(judge.calibration),
        "bias": bias_chart(judge),
        "corrected_board": None if isinstance(judge.corrected, str) else judge.corrected,
        "alt": judge.alt_test(_epsilon(request)) if judge.alt_outcomes else None,
        "thresholds": thresholds,
        "threshold_names": [field.name for field in fields(Thresholds)],  # the form's own; other filters kept
        "protocol": protocol(judge, thresholds),
        "consistent_but_biased": consistent_but_biased(judge, thresholds),
        "epsilons": EPSILON_CHOICES,
        "query": request.GET.urlencode(),
        "scope": _scope(request),
        **_estimator_control(request),
    }
    return render(request, "judgelab/judge_detail.html", context)


# The alt-test's epsilon as the page offers it: the authors' rule of thumb per kind of annotator, and 0.
EPSILON_CHOICES = [(0.2, "0.2: experts"), (0.15, "0.15: skilled annotators"), (0.1, "0.1: crowd workers"), (0.0, "0")]


def _epsilon(request) -> float:
    """The epsilon asked for (?epsilon=), within [0, 0.5]; the experts' 0.2 where none or a bad one is."""
    try:
        value = float(request.GET.get("epsilon", DEFAULT_EPSILON))
    except ValueError:
        return DEFAULT_EPSILON
    return value if 0 <= value <= 0.5 else DEFAULT_EPSILON


@role_required()
@answers_while_computed
def corrected_boards(request, fmt: str = ""):
    """The leaderboard loads this after it renders: each judge on the board whose battles people labelled
    in part, with its ratings corrected by people's labels (the judge page's own table); the judges
    whose battles people labelled too few of, with why; and, where there is neither, a line saying so.
    As CSV or JSON (every judge of the kinds asked, all kinds where none is): every board, one row per
    judge and model."""
    scope, correction = _scope(request), _correction(request)
    kinds = set(request.GET.getlist("kind")) & {MODEL, PANEL}
    if fmt:
        report, _ = _report(request, wait=True)  # a kept file holds the data as it is
        rows = corrected_rows([r for r in report.judges if not kinds or r.judge.kind in kinds])
        if fmt == "json":
            return _download(json.dumps(rows, indent=2), "corrected-boards.json", "application/json")
        return _download(to_text(rows, "csv", CORRECTED_COLUMNS), "corrected-boards.csv", "text/csv")
    report, freshness = report_with_freshness(scope, correction=correction)
    judges = [judge for judge in report.judges if judge.judge.kind in kinds and judge.corrected is not None]
    context = {
        "boards": [(judge, judge.corrected) for judge in judges if isinstance(judge.corrected, CorrectedBoard)],
        "reasons": [(judge, judge.corrected) for judge in judges if isinstance(judge.corrected, str)],
        "freshness": freshness,
        "scope": scope,
        "query": scope_query(scope, correction),
        "kinds": sorted(kinds),
        "kinds_query": urlencode([("kind", kind) for kind in sorted(kinds)]),
        **_estimator_control(request),
    }
    return render(request, "judgelab/_corrected_boards.html", context)


@role_required()
def pointwise(request, fmt: str = ""):
    """Pointwise judges and metrics against people's scores of the same responses, per benchmark."""
    stamp = fingerprint()  # one look at the data for both reads
    benchmarks = scored_benchmarks(stamp)
    slug = request.GET.get("benchmark") or (benchmarks[0] if benchmarks else "")
    if slug and slug not in benchmarks:
        raise Http404("No stored scores of single responses on that benchmark.")
    report = pointwise_report(slug, stamp) if slug else None
    epsilon = _epsilon(request)
    tests = {  # (criterion, judge) → the alternative annotator test at epsilon, from the report's counts
        (name, judge): alt_test_of(r.get("alt_test_outcomes", {}), epsilon=epsilon, kind=NUMERIC)
        for name, entry in (report or {}).get("criteria", {}).items()
        for judge, r in entry["judges"].items()
    }
    if fmt == "json":
        if report is not None:
            report = copy.deepcopy(report)
            for (name, judge), test in tests.items():
                outcomes = report["criteria"][name]["judges"][judge].get("alt_test_outcomes", {})
                report["criteria"][name]["judges"][judge]["alt_test"] = alt_test_json(test, outcomes)
        return _download(json.dumps(report, indent=2), f"pointwise-{slug}.json", "application/json")
    if fmt == "csv":
        rows = pointwise_export_rows(report) if report else []
        return _download(to_text(rows, "csv"), f"pointwise-{slug}.csv", "text/csv")
    criteria = (
        [
            (name, entry, item_chart(entry), [(judge, r, tests[(name, judge)]) for judge, r in entry["judges"].items()])
            for name, entry in sorted(report["criteria"].items())
        ]
        if report
        else []
    )
    limits = {"min_prompts": MIN_PROMPTS, "min_systems": MIN_SYSTEMS}
    context = {"benchmarks": benchmarks, "slug": slug, "criteria": criteria, "epsilon": epsilon, **limits}
    return render(request, "judgelab/pointwise.html", {**context, "epsilons": EPSILON_CHOICES})


@role_required()
def graded(request, fmt: str = ""):
    """Graded preferences against people's average rating (privileged-information paper, Figure 1, Table 4)."""
    scope = _scope(request)
    table = cached(f"graded:{scope.key}", lambda: graded_table(scope))  # once per fingerprint of the data
    if fmt == "csv":
        return _download(to_text(csv_rows(table), "csv"), "graded.csv", "text/csv")
    context = {
        "table": table,
        "chart": rho_chart(table),
        "scope": scope,
        "query": scope_query(scope),
        "benchmarks": Benchmark.objects.order_by("slug").values_list("slug", flat=True),
        "criteria": Criterion.objects.order_by("slug").values_list("slug", flat=True),
    }
    return render(request, "judgelab/graded.html", context)


@role_required()
def model_section(request, slug: str):
    """A model's page loads this after it renders: the whole report is heavier than the page."""
    model = get_object_or_404(LanguageModel, slug=slug)
    return render(request, "judgelab/_as_judge.html", {"as_judge": model_as_judge(model.slug)})


@role_required()
@answers_while_computed
def judge_export(request, key: str, fmt: str):
    judge = _find(request, key, wait=True)  # a file a researcher keeps holds the data as it is
    if fmt == "json":
        steps = protocol(judge, Thresholds.of(request.GET))
        exported = {**judge.as_json(_epsilon(request)), "validation_protocol": [asdict(step) for step in steps]}
        return _download(json.dumps(exported, indent=2), f"judge-{key}.json", "application/json")
    # One row per reliability bin (the figure's data) after the judge's headline row.
    rows = [summary_row(judge)] + [{"judge": judge.judge.name, **bin_} for bin_ in judge.as_json()["reliability"]]
    return _download(to_text(rows, "csv"), f"judge-{key}.csv", "text/csv")


@role_required()
@answers_while_computed
def report_export(request, fmt: str):
    report, _ = _report(request, wait=True)  # a kept file holds the data as it is
    if fmt == "json":
        return _download(
            json.dumps(report.as_json(_epsilon(request)), indent=2), "judge-report.json", "application/json"
        )
    if fmt == "hf":  # one row per judge, every figure of the JSON report (nested ones as records)
        return download([judge.as_json() for judge in report.judges], "hf", "judge-report", "the judge lab")
    return _download(to_text([summary_row(r) for r in report.judges], "csv"), "judge-report.csv", "text/csv")


def _download(body: str, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def imported_message(user, filename: str, summary, pages: tuple[tuple[str, str], ...] | None = None) -> str:
    """What an import did, and links to the pages that now show it (those this person may open)."""
    pages = pages_showing(summary.benchmark.slug) if pages is None else pages
    shown = [(url, label) for label, url in pages if may_open(user, url)]
    if not shown:
        return format_html("Imported {}: {}", filename, summary.describe())
    links = format_html_join(", ", '<a href="{}">{}</a>', shown)
    return format_html("Imported {}: {} See it on {}.", filename, summary.describe(), links)


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def import_judgments(request):
    form = JudgmentImportForm(request.POST or None, request.FILES or None)
    errors: list = []
    preview = None
    if request.method == "POST" and form.is_valid():
        upload, chosen = form.cleaned_data["file"], form.cleaned_data
        reading = {"layout": chosen["layout"], "judges_are": chosen["judges_are"] or AUTO}
        try:
            check_import_size(upload.size)  # before reading a byte of it
            if "preview" in request.POST:  # the first rows as the import reads them; nothing is written
                preview = preview_judgment_file(upload.name, upload.file, benchmark_slug=chosen["benchmark"], **reading)
            else:
                summary = form.import_file(request.user)
                messages.success(request, imported_message(request.user, upload.name, summary))
                return redirect("judge_list")
        except ImportRejected as rejected:
            errors = rejected.errors
    context = {"form": form, "errors": errors[:MAX_ERRORS_SHOWN], "error_count": len(errors), "preview": preview}
    context["preview_headers"] = JUDGMENT_PREVIEW_HEADERS
    return render(request, "judgelab/import.html", context, status=400 if errors else 200)


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def import_scores(request):
    """Scores of single responses: a score file, or Inspect AI logs (one, or a zipped log folder)."""
    form = ScoreImportForm(request.POST or None, request.FILES or None)
    errors: list = []
    preview = None
    if request.method == "POST" and form.is_valid() and "preview" in request.POST:
        upload = form.cleaned_data["file"]
        try:  # the first rows as the import reads them; nothing is written
            check_import_size(upload.size)
            preview = preview_score_file(upload.name, upload.file, benchmark_slug=form.cleaned_data["benchmark"])
        except ImportRejected as rejected:
            errors = rejected.errors
        except InspectMissing as missing:
            errors = [str(missing)]
    elif request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            summary = form.import_file(request.user)
        except ImportRejected as rejected:
            errors = rejected.errors
        except InspectMissing as missing:
            errors = [str(missing)]
        else:
            pages = pages_showing_scores(summary.benchmark.slug)
            messages.success(request, imported_message(request.user, upload.name, summary, pages))
            return redirect(f"{reverse('judge_pointwise')}?{urlencode({'benchmark': summary.benchmark.slug})}")
    context = {"form": form, "errors": errors[:MAX_ERRORS_SHOWN], "error_count": len(errors), "preview": preview}
    context["preview_headers"] = SCORE_PREVIEW_HEADERS
    return render(request, "judgelab/import_scores.html", context, status=400 if errors else 200)
