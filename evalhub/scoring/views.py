from __future__ import annotations

import dataclasses

from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evalhub.accounts.roles import ADMIN, role_required
from evalhub.core.charts import interval_chart
from evalhub.scoring.actions import (
    do_create_discernment_run,
    do_create_gem_run,
)
from evalhub.scoring.discernment.results import discernment_summary, score_rows
from evalhub.scoring.discernment.tables import judge_tables
from evalhub.scoring.forms import DiscernmentRunForm, GemRunForm
from evalhub.scoring.gem.results import SETUP_LABELS, gem_summary, grade_tables, response_score_rows, setup_of
from evalhub.scoring.models import DiscernmentRun, GemRun
from evalhub.system.downloads import download
from evalhub.worklog.issues import issue_groups

RESPONSES_SHOWN = 500


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def gem_create(request):
    form = GemRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        run = do_create_gem_run(form.config(), user=request.user)
        return redirect(run.job)
    return render(request, "scoring/gem_form.html", {"form": form}, status=400 if form.errors else 200)


def results_context(run: GemRun) -> dict:
    summary = run.job.result if run.job.result.get("table") else gem_summary(run)
    tables = [
        {
            "variant": v,
            "entries": summary["table"].get(v["key"], []),
            "chart": interval_chart(summary["table"].get(v["key"], [])),
        }
        for v in summary["variants"]
    ]
    validation = [
        {**meta, "key": key, "cells": [meta["by_metric"].get(m["key"]) for m in summary["validation_metrics"]]}
        for key, meta in summary["validation"].items()
    ]
    groups, total = issue_groups(run.job)
    responses = response_score_rows(run)
    return {
        "grade_tables": grade_tables(run, responses),
        "run": run,
        "summary": summary,
        "setup": [(SETUP_LABELS.get(key, key), value) for key, value in summary["setup"].items()],
        "tables": tables,
        "validation": validation,
        "issue_groups": groups,
        "issue_total": total,
        "responses": responses[:RESPONSES_SHOWN],
        "responses_total": len(responses),
        "responses_more": len(responses) > RESPONSES_SHOWN,
    }


@role_required()
def gem_results(request, pk: int):
    run = get_object_or_404(GemRun.objects.select_related("job"), job_id=pk)
    return render(request, "scoring/_gem_results.html", results_context(run))


@role_required()
def gem_export(request, pk: str, what: str, fmt: str):
    run = get_object_or_404(GemRun.objects.select_related("job"), job_id=pk)
    if what == "responses":
        rows = [{key: value for key, value in row.items() if key != "model_pk"} for row in response_score_rows(run)]
    elif what == "grades":
        rows = [
            {"criterion": criterion, **dataclasses.asdict(row)}
            for criterion, table in grade_tables(run).items()
            for row in table
        ]
    else:
        summary = gem_summary(run)
        rows = [
            {"variant": variant, **entry, **setup_of(run)}
            for variant, entries in summary["table"].items()
            for entry in entries
        ]
    return download(rows, fmt, f"gem-job-{run.job_id}-{what}")


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def discernment_create(request):
    form = DiscernmentRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            run = do_create_discernment_run(form.config(), user=request.user)
        except ValueError as error:
            form.add_error(None, str(error))
        else:
            return redirect(run.job)
    return render(request, "scoring/discernment_form.html", {"form": form}, status=400 if form.errors else 200)


@role_required()
def discernment_results(request, pk: int):
    run = get_object_or_404(DiscernmentRun.objects.select_related("job"), job_id=pk)
    summary = run.job.result if run.job.result.get("family") else discernment_summary(run)
    groups, total = issue_groups(run.job)
    context = {"run": run, "summary": summary, "judges": judge_tables(run, summary)}
    return render(
        request, "scoring/_discernment_results.html", {**context, "issue_groups": groups, "issue_total": total}
    )


@role_required()
def discernment_export(request, pk: str, what: str, fmt: str):
    run = get_object_or_404(DiscernmentRun.objects.select_related("job"), job_id=pk)
    if what == "scores":  # the dhp_report input format, so the numbers can be recomputed anywhere
        return download(score_rows(run), fmt, f"discernment-job-{run.job_id}-scores")
    report = run.job.result if run.job.result.get("family") else discernment_summary(run)
    return download(report, "json", f"discernment-job-{run.job_id}-report")
