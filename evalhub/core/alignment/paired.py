"""Two versions of a judge compared on the same held-out pairs: the difference in agreement with people
and in Cohen's κ, each with a paired bootstrap interval over prompts (issue: judges that improve).

Paired: every resample draws the same prompts for both versions, so what the pairs have in common (a
hard prompt both get wrong) cancels, and the interval is that of the difference, narrower than two
intervals side by side. The draw is the judge lab's Poisson bootstrap over prompts
(`poisson_resampled_sums`), the two versions' confusion tables side by side in one row per prompt.
"No change" is said when the 95 % interval covers 0.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from evalhub.core.judge_lab.measures import (
    BOOTSTRAP,
    MIN_FOR_INTERVAL,
    SEED,
    cluster_positions,
    confusion_tables,
    kappa_of_tables,
    percentiles,
    poisson_resampled_sums,
)

AGREEMENT, KAPPA = "agreement", "kappa"
ORDER_CONSISTENCY = "order_consistency"  # the same verdict with the pair shown in either order
PICKS_LONGER = "picks_longer"  # of decisive verdicts on pairs of different lengths, the longer chosen
PICKS_ITSELF = "picks_itself"  # of decisive verdicts on pairs where the judge's own model answered, its own chosen


@dataclass(frozen=True)
class PairedDifference:
    measure: str  # AGREEMENT or KAPPA
    before: float | None  # the first version's figure on these pairs
    after: float | None
    difference: float | None  # after − before
    low: float | None  # the 95 % paired bootstrap interval of the difference; None below MIN_FOR_INTERVAL prompts
    high: float | None
    pairs: int
    prompts: int

    @property
    def no_change(self) -> bool:
        """The interval covers 0 (or there is none): the data do not tell the versions apart."""
        return self.low is None or self.high is None or self.low <= 0 <= self.high


def paired_differences(
    people: Sequence[int] | np.ndarray,
    before: Sequence[int] | np.ndarray,
    after: Sequence[int] | np.ndarray,
    prompts: Sequence[Hashable] | np.ndarray,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> dict[str, PairedDifference]:
    """Agreement and κ of `after` minus those of `before`, both against `people`, over the same pairs
    (one verdict each, in the pair's canonical order; NO_VERDICT where a version gave none, which counts
    as a disagreement). `prompts` names each pair's prompt, the unit resampled."""
    people, before, after = (np.asarray(values, dtype=int) for values in (people, before, after))
    if not (len(people) == len(before) == len(after) == len(prompts)):
        raise ValueError("people, both versions and the prompts must name the same pairs.")
    if not len(people):
        return {name: PairedDifference(name, None, None, None, None, None, 0, 0) for name in (AGREEMENT, KAPPA)}
    count, groups = cluster_positions(prompts)
    tables = [confusion_tables(version, people, groups, count).astype(float) for version in (before, after)]
    shape = tables[0].shape[1:]
    totals = [table.sum(axis=0) for table in tables]
    figures: dict[str, list[float | None]] = {
        AGREEMENT: [_agreement(total) for total in totals],
        KAPPA: [_nan_to_none(float(kappa_of_tables(total))) for total in totals],
    }
    intervals: dict[str, tuple[float | None, float | None]] = {AGREEMENT: (None, None), KAPPA: (None, None)}
    if count >= MIN_FOR_INTERVAL:
        side_by_side = np.concatenate([table.reshape(count, -1) for table in tables], axis=1)
        sums = poisson_resampled_sums(side_by_side, resamples, seed)
        drawn = [part.reshape(resamples, *shape) for part in np.split(sums, 2, axis=1)]
        with np.errstate(divide="ignore", invalid="ignore"):  # a resample that drew no prompt: left out
            hits = [table[:, 0, 0] + table[:, 1, 1] + table[:, 2, 2] for table in drawn]
            agreement = hits[1] / drawn[1].sum(axis=(1, 2)) - hits[0] / drawn[0].sum(axis=(1, 2))
        intervals[AGREEMENT] = percentiles(agreement)
        intervals[KAPPA] = percentiles(kappa_of_tables(drawn[1]) - kappa_of_tables(drawn[0]))
    out = {}
    for name, (first, second) in figures.items():
        difference = None if first is None or second is None else second - first
        low, high = intervals[name] if difference is not None else (None, None)
        out[name] = PairedDifference(name, first, second, difference, low, high, len(people), count)
    return out


def _agreement(table: np.ndarray) -> float:
    return float(table[0, 0] + table[1, 1] + table[2, 2]) / float(table.sum())


def _nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def paired_rate_differences(
    rates: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    prompts: Sequence[Hashable] | np.ndarray,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> dict[str, PairedDifference]:
    """For each named rate, given per pair as (before's hits, the pairs it counts on, after's hits, the
    pairs it counts on), all booleans: after's rate minus before's, with the same paired Poisson
    bootstrap over prompts (each version keeps its own denominator: a pair one judged in both orders
    and the other did not counts for the one only). `pairs` is how many pairs both count on."""
    out = {}
    count, groups = cluster_positions(prompts) if len(prompts) else (0, np.zeros(0, dtype=int))
    for name, columns in rates.items():
        per_cluster = np.stack(
            [np.bincount(groups, weights=np.asarray(c, dtype=float), minlength=count) for c in columns], axis=1
        )
        hits_before, counted_before, hits_after, counted_after = per_cluster.sum(axis=0)
        before = float(hits_before / counted_before) if counted_before else None
        after = float(hits_after / counted_after) if counted_after else None
        shared = np.asarray(columns[1], dtype=bool) & np.asarray(columns[3], dtype=bool)
        clusters = len(np.unique(groups[shared])) if len(groups) else 0
        difference = None if before is None or after is None else after - before
        low = high = None
        if difference is not None and clusters >= MIN_FOR_INTERVAL:
            sums = poisson_resampled_sums(per_cluster, resamples, seed)
            with np.errstate(divide="ignore", invalid="ignore"):  # a resample with no counted pair: left out
                drawn = sums[:, 2] / sums[:, 3] - sums[:, 0] / sums[:, 1]
            low, high = percentiles(drawn)
        out[name] = PairedDifference(name, before, after, difference, low, high, int(shared.sum()), clusters)
    return out
