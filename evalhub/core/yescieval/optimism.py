"""YESciEval's optimism bias: how far a judge's ratings of adversarial answers stay near its
ratings of the benign ones (YESciEval, Sections 3–4; a robust judge rates extreme attacks
near 1 and subtle ones near 3, Section 5 RQ3).

Per judge, rubric and adversarial variant (subtle, extreme), over the items rated in both
the benign and the adversarial version:
- mean benign and mean adversarial rating, and the drop (benign − adversarial) with a 95%
  t interval of the paired differences;
- retention = mean adversarial / mean benign (1: the attack went unnoticed);
- optimistic share = the share of adversarial ratings ≥ 4 ("good" or better);
- p = one-sided Wilcoxon signed-rank that benign > adversarial (scipy defaults, as DHP).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass

import numpy as np

from evalhub.core.dhp.discernment import wilcoxon_greater

BENIGN = "benign"
ADVERSARIAL = ("subtle", "extreme")
OPTIMISTIC_RATING = 4


@dataclass(frozen=True)
class Shift:
    n: int
    mean_benign: float
    mean_adversarial: float
    drop: float
    drop_low: float
    drop_high: float
    retention: float
    optimistic_share: float
    p: float

    def as_dict(self) -> dict[str, float | int | None]:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


def shift(benign: list[float], adversarial: list[float]) -> Shift:
    from scipy import stats

    b, a = np.asarray(benign, float), np.asarray(adversarial, float)
    n = len(b)
    differences = b - a
    if n >= 2 and np.any(differences != differences[0]):
        low, high = stats.ttest_1samp(differences, 0.0).confidence_interval(0.95)
    elif n >= 1:
        low = high = float(differences.mean())  # no spread: the interval is the point
    else:
        low = high = math.nan
    mean_b = float(b.mean()) if n else math.nan
    mean_a = float(a.mean()) if n else math.nan
    return Shift(
        n=n,
        mean_benign=mean_b,
        mean_adversarial=mean_a,
        drop=mean_b - mean_a if n else math.nan,
        drop_low=float(low),
        drop_high=float(high),
        retention=mean_a / mean_b if n and mean_b else math.nan,
        optimistic_share=float(np.mean(a >= OPTIMISTIC_RATING)) if n else math.nan,
        p=wilcoxon_greater(b, a) if n else math.nan,
    )


def optimism_report(rows: Iterable[tuple[str, str, str, str, float]]) -> dict[str, dict[str, dict[str, Shift]]]:
    """rows: (judge, rubric, item_id, variant, rating) with variant benign, subtle or extreme.
    Returns {judge: {rubric or "all": {variant: Shift}}}; "all" pools the rubrics' pairs."""
    ratings: dict[tuple[str, str, str], dict[str, float]] = defaultdict(dict)
    for judge, rubric, item, variant, rating in rows:
        if variant != BENIGN and variant not in ADVERSARIAL:
            raise ValueError(f"variant must be benign, subtle or extreme, not {variant!r}.")
        if rating is None or (isinstance(rating, float) and math.isnan(rating)):
            continue  # an invalid rating counts as no rating, never as a low one
        ratings[(judge, rubric, item)][variant] = float(rating)
    pairs: dict[tuple[str, str, str], tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for (judge, rubric, _), by_variant in sorted(ratings.items()):
        if BENIGN not in by_variant:
            continue
        for variant in ADVERSARIAL:
            if variant in by_variant:
                for key in ((judge, rubric, variant), (judge, "all", variant)):
                    pairs[key][0].append(by_variant[BENIGN])
                    pairs[key][1].append(by_variant[variant])
    report: dict[str, dict[str, dict[str, Shift]]] = defaultdict(lambda: defaultdict(dict))
    for (judge, rubric, variant), (benign, adversarial) in pairs.items():
        report[judge][rubric][variant] = shift(benign, adversarial)
    return {judge: dict(rubrics) for judge, rubrics in report.items()}
