from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Prefetch
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evalhub.accounts.roles import ADMIN, role_required
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.splits import SplitRejected, do_make_split, do_place_new_prompts, split_summary
from evalhub.catalog.exports import EXPORT_FORMATS, TABLES, table_file
from evalhub.catalog.forms import ImportForm, SplitForm
from evalhub.catalog.models import Benchmark, Judgment, LanguageModel, Prompt
from evalhub.catalog.queries import benchmark_models, benchmark_sizes, responses_per_prompt
from evalhub.core.files.benchmarks import COLUMNS

MAX_ERRORS_SHOWN = 200
PAIRWISE_SHOWN = 100


@role_required()
def benchmark_list(request):
    sizes = benchmark_sizes()
    rows = [(benchmark, *sizes.get(benchmark.pk, (0, 0))) for benchmark in Benchmark.objects.order_by("name")]
    return render(request, "catalog/benchmark_list.html", {"rows": rows})


@role_required()
def benchmark_detail(request, slug: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    page = Paginator(benchmark.prompts.order_by("id"), 50).get_page(request.GET.get("page"))
    # Counted for this page's prompts only: counting the page of a grouped query grouped every response
    # of the benchmark on each view.
    prompts = list(page.object_list)
    counted = responses_per_prompt([prompt.pk for prompt in prompts])
    context = {
        "benchmark": benchmark,
        "page": page,
        "prompt_rows": [(prompt, counted.get(prompt.pk, 0)) for prompt in prompts],
        "models": benchmark_models(benchmark),
        "imports": benchmark.imports.select_related("imported_by")[:10],
        "tables": sorted(TABLES),
        "formats": EXPORT_FORMATS,
        "split": split_summary(benchmark),
        "split_form": SplitForm(),
    }
    return render(request, "catalog/benchmark_detail.html", context)


@role_required(ADMIN)
@require_http_methods(["POST"])
def benchmark_split(request, slug: str):
    """Make the benchmark's held-out split (once), or place the prompts added since it was made."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    summary = split_summary(benchmark)
    try:
        if summary.split is not None:
            placed = do_place_new_prompts(summary.split)
            messages.success(request, f"{placed} new prompt(s) placed; no prompt moved.")
        else:
            form = SplitForm(request.POST)
            if not form.is_valid():
                raise SplitRejected(" ".join(str(error) for errors in form.errors.values() for error in errors))
            fraction = form.cleaned_data["held_out_percent"] / 100
            do_make_split(benchmark, held_out_fraction=fraction, seed=form.cleaned_data["seed"], user=request.user)
            messages.success(request, f"{benchmark.name}: {fraction:.0%} of each category's prompts held out.")
    except SplitRejected as rejected:
        messages.error(request, str(rejected))
    return redirect(benchmark)


@role_required()
def prompt_detail(request, slug: str, pk: int):
    prompt = get_object_or_404(Prompt.objects.select_related("benchmark"), benchmark__slug=slug, pk=pk)
    judged = Judgment.objects.select_related("judge_model", "judge_user", "criterion").order_by("criterion__name", "id")
    responses = (
        prompt.responses.select_related("model", "parent")
        .prefetch_related(Prefetch("judgments", queryset=judged.filter(response_2__isnull=True), to_attr="scores"))
        .order_by("parent_id", "model__display_name")
    )
    # Both sides among the prompt's responses (as both are, a pair being two answers to one prompt), not a
    # join on the prompt: in AlpacaEval's shape every pair's first response is a baseline's, so the plain
    # statistics of either side alone made PostgreSQL expect thousands of rows for each response and read
    # every judgment (3.4 s at ten million); asked of both sides it reads the few it needs (0.06 s).
    ids = list(prompt.responses.values_list("pk", flat=True))
    pairwise = judged.filter(response_id__in=ids, response_2_id__in=ids).select_related(
        "response__model", "response_2__model"
    )
    context = {"pairwise": pairwise[:PAIRWISE_SHOWN], "pairwise_count": pairwise.count()}
    return render(request, "catalog/prompt_detail.html", {"prompt": prompt, "responses": responses, **context})


@role_required(ADMIN)
@require_http_methods(["GET", "POST"])
def import_benchmark(request):
    form = ImportForm(request.POST or None, request.FILES or None, initial={"benchmark": request.GET.get("benchmark")})
    errors = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            summary = form.import_file(request.user)
        except ImportRejected as rejected:
            errors = rejected.errors
        else:
            messages.success(request, f"Imported {upload.name}: {summary.describe()}")
            return redirect(summary.benchmark)
    context = {
        "form": form,
        "errors": errors[:MAX_ERRORS_SHOWN],
        "error_count": len(errors),
        "benchmarks": Benchmark.objects.order_by("slug").values_list("slug", flat=True),
        "columns": COLUMNS,
    }
    return render(request, "catalog/import.html", context, status=400 if errors else 200)


@role_required()
def export_table(request, slug: str, table: str, fmt: str):
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if table not in TABLES or fmt not in EXPORT_FORMATS:
        raise Http404("No such export.")
    return table_file(benchmark, table, fmt)


@role_required()
def model_list(request):
    models = LanguageModel.objects.annotate(n=Count("responses")).order_by("is_human", "display_name")
    return render(request, "catalog/model_list.html", {"models": models})
