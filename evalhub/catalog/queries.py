"""Catalog reads other apps build on (the job kinds choose their prompts here, not in the job engine;
a benchmark's held-out split is read here, once, and handed on as a `Split`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from django.core.cache import cache
from django.db import connection
from django.db.models import Count

from evalhub.catalog.models import LabelSplit, LanguageModel, Prompt, PromptPart, Response
from evalhub.core.alignment.split import PARTS
from evalhub.system.cache_versions import CacheVersion

MODEL_COUNTS_KEPT_S = 24 * 3600
DELETED = CacheVersion("catalog:prompts-or-responses-deleted")


def chosen_prompt_ids(benchmark, subset: Sequence[int] = ()) -> list[int]:
    """The benchmark's prompt ids in order, or only those of `subset` (empty = all)."""
    prompts = benchmark.prompts.order_by("pk")
    if subset:
        prompts = prompts.filter(pk__in=subset)
    return list(prompts.values_list("pk", flat=True))


@dataclass(frozen=True)
class Split:
    """A benchmark's held-out split as read: which part each placed prompt is in. A prompt added since
    the split is in neither part. Which part whom may read is decided in evalhub.reads.judged_pairs."""

    id: int
    benchmark: str  # its benchmark's slug
    parts: Mapping[int, str]  # prompt id → TRAIN or HELD_OUT

    def part(self, prompt: int) -> str | None:
        return self.parts.get(prompt)


def benchmark_split(benchmark: str) -> LabelSplit | None:
    """The benchmark's split (its row, which runs and versions point to), None without one."""
    return LabelSplit.objects.filter(benchmark__slug=benchmark).select_related("benchmark").first()


def read_splits(ids: Iterable[int]) -> dict[int, Split]:
    """Each split by id, its prompts' parts read in one query."""
    rows = LabelSplit.objects.filter(pk__in=set(ids)).values_list("pk", "benchmark__slug")
    parts: dict[int, dict[int, str]] = {pk: {} for pk, _ in rows}
    placed = PromptPart.objects.filter(split_id__in=parts, part__in=PARTS).values_list("split_id", "prompt_id", "part")
    for split, prompt, part in placed.iterator(chunk_size=5000):
        parts[split][prompt] = part
    return {pk: Split(pk, slug, parts[pk]) for pk, slug in rows}


def read_split(split: LabelSplit) -> Split:
    return read_splits([split.pk])[split.pk]


def benchmark_models(benchmark) -> list[dict]:
    """The models that answered the benchmark's prompts (not perturbed copies), each with its number of
    responses, by name. Counting them reads every response of the benchmark: 0.49 s of every view of its
    page with 240,000 responses on SQLite (benchmarks/page_scale.py at ten million judgments), so the
    counts are kept until a prompt or response is added or deleted (`_catalog_state`)."""
    key = f"catalog:benchmark-models:{benchmark.pk}:{_catalog_state()}"
    counts = cache.get(key)
    if counts is None:
        rows = Response.objects.filter(prompt__benchmark=benchmark, parent__isnull=True)
        counts = list(rows.values_list("model_id").annotate(n=Count("pk")).order_by())
        cache.set(key, counts, MODEL_COUNTS_KEPT_S)
    models = LanguageModel.objects.in_bulk([model for model, _ in counts])
    found = [
        {"display_name": m.display_name, "slug": m.slug, "n": n, "is_human": m.is_human}
        for model, n in counts
        if (m := models.get(model)) is not None
    ]
    return sorted(found, key=lambda row: (row["display_name"], row["slug"]))


def benchmark_sizes() -> dict[int, tuple[int, int]]:
    """Each benchmark's number of prompts and of responses (not perturbed copies), for the benchmarks'
    list: kept as `benchmark_models` keeps its counts (both read every prompt and response there are)."""
    key = f"catalog:benchmark-sizes:{_catalog_state()}"
    sizes = cache.get(key)
    if sizes is None:
        prompts = Prompt.objects.values_list("benchmark_id").annotate(n=Count("pk")).order_by()
        responses = Response.objects.filter(parent__isnull=True).values_list("prompt__benchmark_id")
        answered = dict(responses.annotate(n=Count("pk")).order_by())
        sizes = {benchmark: (n, answered.get(benchmark, 0)) for benchmark, n in prompts}
        cache.set(key, sizes, MODEL_COUNTS_KEPT_S)
    return sizes


def _catalog_state() -> str:
    """What moves the counts of prompts and responses: the newest of each (they are added, never moved to
    another benchmark, model or prompt) and a number every committed deletion raises (`catalog_deleted`)."""
    responses, prompts = Response._meta.db_table, Prompt._meta.db_table
    with connection.cursor() as cursor:  # one round trip for both (each an index's last entry)
        cursor.execute(f"SELECT (SELECT MAX(id) FROM {responses}), (SELECT MAX(id) FROM {prompts})")  # noqa: S608
        newest, newest_prompt = cursor.fetchone()
    return f"{newest or 0}:{newest_prompt or 0}:{DELETED.current()}"


def responses_per_prompt(prompt_ids: Sequence[int]) -> dict[int, int]:
    """Each prompt's number of responses (perturbed copies included), for a page of prompts."""
    rows = Response.objects.filter(prompt_id__in=prompt_ids).values_list("prompt_id").annotate(n=Count("pk"))
    return dict(rows.order_by())


def catalog_deleted(**_signal_kwargs) -> None:
    """A prompt or response is being deleted (pre_delete; a cascade sends one per row): once its transaction
    commits, counts kept of them are counted again."""
    DELETED.raise_after_commit()
