from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evalhub.accounts.roles import ADMIN, role_required
from evalhub.catalog.models import Benchmark
from evalhub.generation.actions import (
    GenerationRejected,
    do_compare_with_anchor,
    do_create_generation_run,
    do_edit_hints,
    do_save_template,
)
from evalhub.generation.analysis import run_responses, tier_analysis, tier_of
from evalhub.generation.config import spec_of
from evalhub.generation.forms import AnchorComparisonForm, GenerationRunForm, HintsForm, TemplateForm
from evalhub.generation.models import GenerationRun, PromptHints, PromptTemplate
from evalhub.reads.battle_filters import BattleFilterForm
from evalhub.reads.battles import SOURCES
from evalhub.system.downloads import download
from evalhub.system.forms import form_reasons
from evalhub.worklog.issues import issue_groups


@role_required()
def index(request):
    runs = GenerationRun.objects.select_related("job", "benchmark", "template").order_by("-pk")[:50]
    benchmarks = Benchmark.objects.order_by("name")
    return render(request, "generation/index.html", {"runs": runs, "benchmarks": benchmarks})


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def run_create(request):
    form = GenerationRunForm(request.POST or None, initial={"benchmark": request.GET.get("benchmark")})
    if request.method == "POST" and form.is_valid():
        try:
            run = do_create_generation_run(form.config(), user=request.user)
        except GenerationRejected as error:
            form.add_error(None, str(error))
        else:
            return redirect(run.job)
    return render(request, "generation/run_form.html", {"form": form}, status=400 if form.errors else 200)


def _bad_sources(form) -> HttpResponseBadRequest:
    return HttpResponseBadRequest(f"These sources cannot be used: {form_reasons(form)}", content_type="text/plain")


def _sources(form) -> tuple[str, ...]:
    """The verdict sources chosen in the query string (all of them by default)."""
    return tuple(form.cleaned_data["source"]) or tuple(SOURCES)


@role_required()
def results(request, pk: int):
    run = get_object_or_404(GenerationRun.objects.select_related("job", "benchmark", "template", "anchor"), job_id=pk)
    form = BattleFilterForm(request.GET)
    if not form.is_valid():
        return _bad_sources(form)
    sources = _sources(form)
    analysis = tier_analysis(run, sources)
    models = sorted(run.candidates.values_list("slug", flat=True))
    grid = [{"model": m, "cells": [analysis["counts"].get((m, t), 0) for t in run.tiers]} for m in models]
    groups, total = issue_groups(run.job)
    context = {
        "run": run,
        "analysis": analysis,
        "grid": grid,
        "issue_groups": groups,
        "issue_total": total,
        "sources": [(key, label, key in sources) for key, label in SOURCES.items()],
        "variants": sorted({run.variant(t, 0) for t in run.tiers}),
        "compare_form": AnchorComparisonForm(benchmark=run.benchmark) if run.anchor_id else None,
        "battles": [(SOURCES[key], n) for key, n in analysis["battles"].items()],
        "candidate_specs": [spec_of(model) for model in run.candidates.all()],
    }
    return render(request, "generation/_results.html", context)


@role_required()
def export(request, pk: str, what: str, fmt: str):
    run = get_object_or_404(GenerationRun.objects.select_related("template", "anchor"), job_id=pk)
    if what == "responses":
        tiers = tier_of(run)
        rows = [
            {
                "response_id": r.pk,
                "prompt_id": r.prompt.external_id,
                "model": r.model.slug,
                "variant": r.variant,
                "template": run.template.slug,
                "hint_tier": tiers[r.variant],
                "sample": r.metadata.get("sample", 0),
                "job": run.job_id,
                "provider": r.metadata.get("provider", ""),
                "text": r.text,
            }
            for r in run_responses(run)
            .select_related("prompt", "model")
            .order_by("prompt_id", "model__slug", "variant")
        ]
        return download(rows, fmt, f"generation-job-{run.job_id}-responses")
    form = BattleFilterForm(request.GET)
    if not form.is_valid():
        return _bad_sources(form)
    analysis = tier_analysis(run, _sources(form))
    rows = []
    for measure in ("accuracy", "win_rate"):
        table = analysis[measure]
        if not table:
            continue
        for row in table["rows"]:
            cells = [("overall", row["overall"]), *zip(table["tiers"], row["cells"], strict=True)]
            for tier, cell in cells:
                if cell is not None:
                    rows.append(
                        {
                            "measure": measure,
                            "model": row["model"],
                            "template": run.template.slug,
                            "tier": tier,
                            "anchor": run.anchor.slug if measure == "win_rate" and run.anchor else "",
                            **cell.as_dict(),
                        }
                    )
    return download(rows, fmt, f"generation-job-{run.job_id}-tiers")


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def templates(request):
    form = TemplateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            template = do_save_template(**form.cleaned_data, by=request.user)
        except GenerationRejected as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Template {template.slug} saved.")
            return redirect("generation_templates")
    context = {"form": form, "templates": PromptTemplate.objects.all()}
    return render(request, "generation/templates.html", context, status=400 if form.errors else 200)


@role_required(ADMIN)
def hints(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    records = PromptHints.objects.filter(prompt__benchmark=benchmark).select_related("prompt", "edited_by")
    without = benchmark.prompts.filter(hints__isnull=True).count()
    return render(request, "generation/hints.html", {"benchmark": benchmark, "records": records, "without": without})


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def hints_edit(request, pk: int):
    record = get_object_or_404(PromptHints.objects.select_related("prompt__benchmark"), pk=pk)
    form = HintsForm(request.POST or None, hints=record.hints, initial={"accept_leaks": record.leak_accepted})
    if request.method == "POST" and form.is_valid():
        try:
            record = do_edit_hints(
                record, hints=form.hints(), accept_leaks=form.cleaned_data["accept_leaks"], by=request.user
            )
        except GenerationRejected as error:
            form.add_error(None, str(error))
        else:
            note = f" Hint {', '.join(map(str, record.leaks))} still contains the final answer." if record.leaks else ""
            messages.success(request, "Hints saved." + note)
            return redirect("generation_hints", slug=record.prompt.benchmark.slug)
    return render(
        request, "generation/hints_edit.html", {"record": record, "form": form}, status=400 if form.errors else 200
    )


@role_required(ADMIN)
@require_http_methods(["POST"])
def compare(request, pk: int):
    run = get_object_or_404(GenerationRun.objects.select_related("job", "anchor", "benchmark", "template"), job_id=pk)
    form = AnchorComparisonForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Nothing started: {form_reasons(form)}")
        return redirect(run.job)
    try:
        made, skipped = do_compare_with_anchor(run, user=request.user, **form.comparison_fields())
    except GenerationRejected as error:
        messages.error(request, str(error))
        return redirect(run.job)
    anchor = run.anchor.slug if run.anchor else "the anchor"
    messages.success(
        request,
        f"Started {len(made)} judge run{'s' if len(made) != 1 else ''} against {anchor}; "
        "win rates fill in as they finish.",
    )
    for reason in skipped:
        messages.warning(request, f"Skipped {reason}")
    return redirect(run.job)
