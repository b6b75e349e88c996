"""People's verdicts and judges' verdicts on a benchmark's pairs under one criterion, as arrays over
the judge lab's pairs (its observations): what the training set (train prompts) and the comparison of
versions (held-out prompts) each take their part of."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from evalhub.core.judge_lab.measures import ABSENT, LabelArrays, Pair, dense_verdicts
from evalhub.core.judge_lab.report import COLUMN, majority_of_counts
from evalhub.core.judge_lab.report_types import PERSON
from evalhub.reads.judged_pairs import BLIND, Scope, collect


@dataclass
class PairVerdicts:
    items: list  # the pairs, in the arrays' order
    pairs: list[Pair]
    people: np.ndarray  # people's majority per pair (ABSENT where they did not settle it)
    judges: dict[str, np.ndarray]  # judge id → its verdict per pair (ABSENT where it judged none)
    other_order: dict[str, np.ndarray]  # judge id → its verdict with the pair shown the other way round

    def prompt(self, row: int) -> int:
        return cast(int, self.pairs[row].cluster)  # the judge lab's cluster is the prompt's id


def pair_verdicts(benchmark: str, criterion: str, judges: list[str], *, people: str = BLIND) -> PairVerdicts:
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
    verdicts, other_order = {}, {}
    absent = np.full(len(items), ABSENT)
    for judge in judges:
        dense = dense_verdicts(labels[judge], len(items)) if judge in labels else None
        verdicts[judge] = dense.primary if dense is not None else absent
        other_order[judge] = dense.other_order if dense is not None else absent
    pairs = [found.pairs[item] for item in items]
    return PairVerdicts(items, pairs, majority_of_counts(counts), verdicts, other_order)
