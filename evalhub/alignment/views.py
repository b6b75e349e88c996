from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Max
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evalhub.accounts.roles import ADMIN, role_required
from evalhub.alignment.actions import (
    VersionRejected,
    do_create_judge,
    do_derive_version,
    do_distil_reasons,
    do_rewrite_instructions,
    do_run_version,
    do_search_settings,
    do_start_few_shot,
)
from evalhub.alignment.comparisons import compare_versions
from evalhub.alignment.forms import (
    ImproveForm,
    JudgeForm,
    ReasonsForm,
    RewriteForm,
    RunVersionForm,
    SettingsSearchForm,
)
from evalhub.alignment.models import JudgeVersion
from evalhub.alignment.reports import comparison_row, version_rows
from evalhub.system.downloads import download


@role_required()
def version_list(request):
    """Every judge with its latest version, and (for an admin) a form to define a new judge by hand."""
    return _list_page(request, JudgeForm())


@role_required(ADMIN)
@require_http_methods(["POST"])
def create_judge(request):
    form = JudgeForm(request.POST)
    if form.is_valid():
        try:
            do_create_judge(
                form.cleaned_data["name"], form.definition(), user=request.user, note=form.cleaned_data["note"]
            )
        except VersionRejected as rejected:
            form.add_error(None, str(rejected))
        else:
            return redirect("judge_versions", name=form.cleaned_data["name"])
    return _list_page(request, form, status=400)


def _list_page(request, form: JudgeForm, status: int = 200):
    judges = JudgeVersion.objects.values("name").annotate(versions=Count("id"), latest=Max("number")).order_by("name")
    return render(request, "alignment/version_list.html", {"judges": judges, "form": form}, status=status)


@role_required()
def judge_versions(request, name: str, fmt: str = ""):
    """A judge's versions, each with what it changed from its parent; as JSON with `fmt`."""
    versions = list(JudgeVersion.objects.filter(name=name).select_related("parent", "split__benchmark", "created_by"))
    if not versions:
        raise Http404("no such judge")
    rows = version_rows(versions)
    if fmt:
        return download({"judge": name, "versions": rows}, "json", f"judge-{name}")
    latest = versions[-1]
    context = {
        "name": name,
        "rows": rows,
        "form": JudgeForm.of(name, latest.judge),
        "latest": latest,
        "specs": [version.judge.spec for version in versions],
    }
    for row in rows:  # each version's own forms: ids of their own, so a label names its version's field
        kinds = {
            "run": RunVersionForm,
            "improve": ImproveForm,
            "settings": SettingsSearchForm,
            "rewrite": RewriteForm,
            "reasons": ReasonsForm,
        }
        row["forms"] = {kind: form(auto_id=f"v{row['version']}-{kind}-%s") for kind, form in kinds.items()}
    return render(request, "alignment/judge_versions.html", context)


@role_required()
def compare_versions_page(request, name: str):
    """Any two versions of a judge, paired on the pairs both judged (as JSON with ?format=json)."""
    try:
        before, after = (int(request.GET.get(side, "")) for side in ("before", "after"))
    except ValueError:
        raise Http404("name two versions: ?before=N&after=M") from None
    versions = {v.number: v for v in JudgeVersion.objects.filter(name=name, number__in=(before, after))}
    if before not in versions or after not in versions:
        raise Http404("no such version")
    comparisons = [comparison_row(c) for c in compare_versions(versions[before], versions[after])]
    if request.GET.get("format") == "json":
        return download(
            {"judge": name, "before": before, "after": after, "comparisons": comparisons},
            "json",
            f"judge-{name}-v{before}-v{after}",
        )
    context = {"name": name, "before": versions[before], "after": versions[after], "comparisons": comparisons}
    return render(request, "alignment/compare.html", context)


@role_required(ADMIN)
@require_http_methods(["POST"])
def run_version(request, name: str, number: int):
    """Run a version on a debate run's pairs (a single-judge job)."""
    return _start_job(
        request,
        name,
        number,
        RunVersionForm,
        lambda version, data: do_run_version(version, data["reference"], user=request.user, again=data["again"]),
    )


@role_required(ADMIN)
@require_http_methods(["POST"])
def improve_version(request, name: str, number: int):
    """Few-shot from its train disagreements (a job): the next version carries the worked examples."""

    def start(version, data):
        benchmark, criterion = data["benchmark"].slug, data["criterion"].slug
        return do_start_few_shot(
            version, benchmark, criterion, examples=data["examples"], seed=data["seed"], user=request.user
        )

    return _start_job(request, name, number, ImproveForm, start)


@role_required(ADMIN)
@require_http_methods(["POST"])
def derive_version(request, name: str):
    """A new version of the judge by hand: the latest version's definition as edited on the page."""
    latest = JudgeVersion.objects.filter(name=name).order_by("-number").first()
    if latest is None:
        raise Http404("no such judge")
    form = JudgeForm(request.POST)
    try:
        if not form.is_valid():
            raise VersionRejected(" ".join(str(e) for errors in form.errors.values() for e in errors))
        edited = form.definition(examples=latest.judge.examples)  # examples change by a method, not by hand
        version = do_derive_version(latest, edited, user=request.user, note=form.cleaned_data["note"])
    except VersionRejected as rejected:
        messages.error(request, str(rejected))
    else:
        messages.success(request, f"{version} made.")
    return redirect("judge_versions", name=name)


@role_required(ADMIN)
@require_http_methods(["POST"])
def search_settings(request, name: str, number: int):
    """Choice of settings (a job): the grid's candidates scored on train pairs; the best is the next version."""

    def start(version, data):
        return do_search_settings(version, data["reference"], SettingsSearchForm.candidates(), user=request.user)

    return _start_job(request, name, number, SettingsSearchForm, start)


@role_required(ADMIN)
@require_http_methods(["POST"])
def rewrite_instructions(request, name: str, number: int):
    """Instruction rewriting (a job): proposals scored on train pairs; the best that beats the current
    instructions is the next version."""

    def start(version, data):
        return do_rewrite_instructions(
            version,
            data["reference"],
            data["proposer"],
            proposals=data["proposals"],
            seed=data["seed"],
            user=request.user,
        )

    return _start_job(request, name, number, RewriteForm, start)


@role_required(ADMIN)
@require_http_methods(["POST"])
def distil_reasons(request, name: str, number: int):
    """Learning from people's reasons (a job): guidelines distilled from the reasons people wrote on the
    version's train disagreements; the next version if it agrees with people more on the train pairs."""

    def start(version, data):
        return do_distil_reasons(
            version,
            data["reference"],
            data["proposer"],
            examples=data["examples"],
            seed=data["seed"],
            user=request.user,
        )

    return _start_job(request, name, number, ReasonsForm, start)


def _start_job(request, name: str, number: int, form_class, start):
    """Check the form, start the version's job and show it; a problem goes back to the versions page, said."""
    version = get_object_or_404(JudgeVersion, name=name, number=number)
    form = form_class(request.POST)
    try:
        if not form.is_valid():
            raise VersionRejected(" ".join(str(e) for errors in form.errors.values() for e in errors))
        run = start(version, form.cleaned_data)
    except VersionRejected as rejected:
        messages.error(request, str(rejected))
        return redirect("judge_versions", name=name)
    return redirect("job_detail", pk=run.job_id)
