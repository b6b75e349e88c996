"""The one door through which whatever builds or tunes a judge reads people's labels: pairs on the
benchmark's *train* prompts only (catalog.LabelSplit). Held-out prompts, and prompts added since the
split and not yet placed, never leave this module; `evalhub.alignment.improvers` may not read labels any
other way (an import contract in pyproject.toml)."""

from __future__ import annotations

from typing import cast

import numpy as np

from evalhub.catalog.actions.splits import prompt_parts
from evalhub.core.alignment.fewshot import TrainingPair
from evalhub.core.alignment.split import TRAIN
from evalhub.core.judge_lab.measures import ABSENT, NO_VERDICT, LabelArrays, dense_verdicts
from evalhub.core.judge_lab.report import COLUMN, majority_of_counts
from evalhub.core.judge_lab.report_types import PERSON
from evalhub.judgelab.observations import BLIND, Scope, collect


class NoSplit(Exception):
    pass


def training_pairs(benchmark: str, criterion: str, judge: str, *, people: str = BLIND) -> list[TrainingPair]:
    """The benchmark's train pairs under `criterion` that people settled (their majority, blind verdicts
    by default), each with `judge`'s verdict (NO_VERDICT where it gave none). Raises NoSplit."""
    parts = prompt_parts(benchmark)
    if not parts:
        raise NoSplit(f"{benchmark} has no held-out split: split it once on its page first.")
    found = collect(Scope(benchmark=benchmark, criterion=criterion, people=people))
    items = list(found.pairs)  # in row order, which the label arrays index
    labels = {
        judge_id: given if isinstance(given, LabelArrays) else LabelArrays.of(given, found.rows)
        for judge_id, given in found.labels.items()
    }
    counts = np.zeros((len(items), 3))
    for judge_id, info in found.judges.items():
        if info.kind == PERSON:
            picks = dense_verdicts(labels[judge_id], len(items)).primary
            for verdict, column in COLUMN.items():
                counts[:, column] += picks == verdict
    settled = majority_of_counts(counts)
    mine = dense_verdicts(labels[judge], len(items)).primary if judge in labels else np.full(len(items), ABSENT)
    out = []
    for row, item in enumerate(items):
        pair = found.pairs[item]
        if parts.get(cast(int, pair.cluster)) != TRAIN or settled[row] == ABSENT:  # the cluster is the prompt
            continue
        verdict = int(mine[row])
        out.append(
            TrainingPair(
                item=item,
                prompt=pair.cluster,
                category=pair.category,
                people=int(settled[row]),
                judge=NO_VERDICT if verdict == ABSENT else verdict,
            )
        )
    return out
