"""Catalog reads other apps build on (the job kinds choose their prompts here, not in the job engine;
a benchmark's held-out split is read here, once, and handed on as a `Split`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from evalhub.catalog.models import LabelSplit, PromptPart
from evalhub.core.alignment.split import PARTS


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
