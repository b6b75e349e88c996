"""Few-shot from disagreements: worked examples for a judge's prompt from the train pairs it got wrong."""

from __future__ import annotations

from evalhub.alignment.training_set import training_pairs
from evalhub.core.alignment.fewshot import Example, choose_examples


def few_shot_examples(benchmark: str, criterion: str, judge: str, *, k: int = 4, seed: int = 0) -> list[Example]:
    """Up to k examples by the rule of evalhub.core.alignment.fewshot, from train labels only."""
    return choose_examples(training_pairs(benchmark, criterion, judge), k, seed)
