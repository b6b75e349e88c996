"""Catalog reads other apps build on (the job kinds choose their prompts here, not in the job engine)."""

from __future__ import annotations

from collections.abc import Sequence


def chosen_prompt_ids(benchmark, subset: Sequence[int] = ()) -> list[int]:
    """The benchmark's prompt ids in order, or only those of `subset` (empty = all)."""
    prompts = benchmark.prompts.order_by("pk")
    if subset:
        prompts = prompts.filter(pk__in=subset)
    return list(prompts.values_list("pk", flat=True))
