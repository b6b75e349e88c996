"""A benchmark's held-out split (evalhub.core.alignment.split): made once, kept, and extended to prompts
added since without moving any prompt already placed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from evalhub.catalog.actions.importing import real_user
from evalhub.catalog.models import Benchmark, LabelSplit, PromptPart
from evalhub.core.alignment.split import HELD_OUT, TRAIN, SplitPrompt, assign_parts


class SplitRejected(Exception):
    pass


def check_split_settings(held_out_fraction: float, seed: int) -> None:
    if not 0.05 <= held_out_fraction <= 0.9:
        raise SplitRejected("hold out between 5 % and 90 % of the prompts.")
    if not -(2**31) <= seed < 2**31:
        raise SplitRejected("the seed is a 32-bit integer.")


def do_make_split(benchmark: Benchmark, *, held_out_fraction: float, seed: int = 0, user: Any = None) -> LabelSplit:
    """Split the benchmark's prompts, once: a second split would let a judge tuned on the first's train
    labels be scored on them. Raises SplitRejected."""
    check_split_settings(held_out_fraction, seed)
    try:
        with transaction.atomic():
            split = LabelSplit.objects.create(
                benchmark=benchmark, held_out_fraction=held_out_fraction, seed=seed, created_by=real_user(user)
            )
            _place(split)
    except IntegrityError:  # the benchmark has one already (two admins at once: the second finds the first's)
        raise SplitRejected(f"{benchmark.slug} is split already; a split is made once and kept.") from None
    return split


def do_place_new_prompts(split: LabelSplit) -> int:
    """Place the prompts added since the split (none is moved); how many were placed."""
    with transaction.atomic():
        split = LabelSplit.objects.select_for_update().select_related("benchmark").get(pk=split.pk)
        return _place(split)


def _place(split: LabelSplit) -> int:
    placed = dict(PromptPart.objects.filter(split=split).values_list("prompt_id", "part"))
    prompts = [
        SplitPrompt(key=pk, external_id=external_id, category=category)
        for pk, external_id, category in split.benchmark.prompts.values_list("pk", "external_id", "category")
    ]
    new = assign_parts(prompts, split.held_out_fraction, split.seed, placed)
    PromptPart.objects.bulk_create(
        [PromptPart(split=split, prompt_id=pk, part=part) for pk, part in new.items()], batch_size=5000
    )
    return len(new)


@dataclass(frozen=True)
class SplitSummary:
    split: LabelSplit | None
    by_category: list[tuple[str, int, int]]  # (category, train prompts, held-out prompts)
    unplaced: int  # prompts added since the split

    @property
    def totals(self) -> tuple[int, int]:
        return sum(row[1] for row in self.by_category), sum(row[2] for row in self.by_category)


def split_summary(benchmark: Benchmark) -> SplitSummary:
    split = LabelSplit.objects.filter(benchmark=benchmark).first()
    if split is None:
        return SplitSummary(None, [], 0)
    counts = Counter(split.parts.values_list("prompt__category", "part"))
    categories = sorted({category for category, _ in counts})
    rows = [(category, counts[(category, TRAIN)], counts[(category, HELD_OUT)]) for category in categories]
    unplaced = benchmark.prompts.filter(split_part__isnull=True).count()
    return SplitSummary(split, rows, unplaced)
