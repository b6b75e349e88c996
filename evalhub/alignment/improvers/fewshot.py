"""Few-shot from disagreements: a new version of a judge whose prompt carries worked examples taken
from the train pairs it got wrong (the rule of evalhub.core.alignment.fewshot)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evalhub.alignment.actions import VersionRejected, do_derive_version
from evalhub.alignment.models import JudgeVersion, Method
from evalhub.alignment.training_set import pair_texts, training_pairs, training_split
from evalhub.core.alignment.fewshot import Example, choose_examples
from evalhub.core.alignment.versions import WorkedExample

MOST_EXAMPLES = 16


def few_shot_examples(benchmark: str, criterion: str, judge: str, *, k: int = 4, seed: int = 0) -> list[Example]:
    """Up to k examples by the rule of evalhub.core.alignment.fewshot, from train labels only."""
    return choose_examples(training_pairs(benchmark, criterion, judge), k, seed)


def do_improve_with_examples(
    version: JudgeVersion, benchmark: str, criterion: str, *, k: int = 4, seed: int = 0, user: Any = None
) -> JudgeVersion:
    """The next version of `version`'s judge with up to k worked examples from the train pairs of
    `benchmark` where `version` (run on them) and people disagree. Raises VersionRejected."""
    if not 1 <= k <= MOST_EXAMPLES:
        raise VersionRejected(f"ask for between 1 and {MOST_EXAMPLES} examples.")
    pairs = training_pairs(benchmark, criterion, str(version))
    judged = [pair for pair in pairs if pair.judge >= 0]
    if not judged:
        raise VersionRejected(f"{version} has no verdict on {benchmark}'s train pairs: run it on them first.")
    chosen = choose_examples(pairs, k, seed)
    if not chosen:
        raise VersionRejected(f"{version} agrees with people on every train pair: no example to learn from.")
    texts = pair_texts([example.item for example in chosen])
    examples = []
    for example in chosen:
        question, first, second = texts[example.item]
        if example.reversed:
            first, second = second, first
        examples.append(WorkedExample(question, first, second, example.verdict, example.category))
    wrong = sum(pair.judge != pair.people for pair in pairs)
    note = (
        f"{len(examples)} worked example(s) from {wrong} train disagreement(s) of {len(pairs)} train pair(s) "
        f"on {benchmark} ({criterion}), chosen by the fixed rule with seed {seed}."
    )
    definition = replace(version.judge, examples=tuple(examples))
    return do_derive_version(
        version, definition, method=Method.FEW_SHOT, split=training_split(benchmark), user=user, note=note
    )
