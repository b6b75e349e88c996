"""DHP discernment statistics (DHP, Section 2.3).

For each perturbation i and metric j: a one-sided Wilcoxon signed-rank test that original
scores exceed perturbed ones (scipy's defaults: zero_method="wilcox", method="auto"). The
metric p-values of a perturbation are combined by the harmonic mean p-value, plain
(M / Σ 1/p_j) or expert-weighted (1 / Σ EW_j / p_j, Σ EW_j = 1), and turned into a
discernment score D = log_0.05(p) = ln p / ln 0.05 (D > 1 ⇔ p < 0.05).

Documented choices:
- all differences zero (the judge gave identical scores): no evidence, p = 1, D = 0;
- p is floored at P_FLOOR before the logarithm, so D stays finite (D ≤ ln(1e-300)/ln(0.05) ≈ 230);
- the paper prints the plain form as 1 / Σ 1/p_j (line 77), which is not a p-value for M > 1
  (four metrics at p = 0.2 would give 0.05); `paper_literal=True` reproduces it for comparison;
- D_avg is level-balanced: the mean over levels (C, W, S) of the mean D of that level's
  perturbations; D_min is the minimum D over the perturbations tested on at least MIN_ITEMS texts.
  With n texts the smallest one-sided Wilcoxon p is 2^-n (n = 4: 0.0625, D at most 0.93), so a
  perturbation tried on a handful of texts would set D_min by its n, not by the judge. Each
  perturbation carries its n; `D_min_over` says how many perturbations D_min was taken over, and
  D_min is None when none has enough texts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

P_FLOOR = 1e-300
MIN_ITEMS = 10  # texts a perturbation needs before it counts towards D_min
LEVELS = ("C", "W", "S")
_LN_005 = math.log(0.05)


def wilcoxon_greater(original: Sequence[float] | np.ndarray, perturbed: Sequence[float] | np.ndarray) -> float:
    """One-sided p that `original` exceeds `perturbed` (paired)."""
    return float(wilcoxon_greater_many(np.asarray([original], float), np.asarray([perturbed], float))[0])


# scipy.stats.wilcoxon's method="auto" (see its Notes): exact when there are no ties and no zeros
# and n ≤ 50; an exhaustive permutation test when there are ties or zeros and n ≤ 13; else the
# normal approximation. scipy decides once per call, over the whole array, so rows are split by
# their own case first: every row gets the p-value a call on that row alone would give.
EXACT_MAX_N = 50
PERMUTATION_MAX_N = 13


def wilcoxon_greater_many(original: np.ndarray, perturbed: np.ndarray) -> np.ndarray:
    """Row-wise one-sided Wilcoxon p-values (original > perturbed) for equally long rows of
    paired scores, each as `scipy.stats.wilcoxon(o, p, alternative="greater")` gives it."""
    from scipy.stats import wilcoxon

    original, perturbed = np.atleast_2d(original), np.atleast_2d(perturbed)
    d = original - perturbed
    n = d.shape[1]
    p = np.ones(d.shape[0])
    informative = np.any(d != 0, axis=1)  # all-zero differences: p = 1 by definition
    magnitudes = np.sort(np.abs(d), axis=1)
    ties = np.any((magnitudes[:, 1:] == magnitudes[:, :-1]) & (magnitudes[:, 1:] > 0), axis=1)
    irregular = ties | np.any(d == 0, axis=1)
    permutation = informative & irregular & (n <= PERMUTATION_MAX_N)
    scipy_rows = informative & ~permutation
    for rows in (scipy_rows & ~irregular, scipy_rows & irregular):  # exact-or-approx, approx
        if rows.any():
            p[rows] = wilcoxon(
                original[rows], perturbed[rows], zero_method="wilcox", alternative="greater", method="auto", axis=1
            ).pvalue
    for row in np.flatnonzero(permutation):
        p[row] = _permutation_greater(d[row])
    return p


def _permutation_greater(d: np.ndarray) -> float:
    """The exhaustive sign-flip permutation p-value of the signed-rank sum (what scipy's
    PermutationMethod computes for n ≤ 13), by counting subset sums of the doubled ranks."""
    from scipy.stats import rankdata

    nonzero = d[d != 0]
    doubled = np.rint(2 * rankdata(np.abs(nonzero))).astype(int)
    observed = int(doubled[nonzero > 0].sum())
    return _upper_tail(tuple(sorted(doubled)), observed)


@lru_cache(maxsize=4096)
def _upper_tail(doubled_ranks: tuple[int, ...], observed: int) -> float:
    counts = np.zeros(sum(doubled_ranks) + 1)
    counts[0] = 1.0
    for rank in doubled_ranks:
        shifted = counts.copy()
        shifted[rank:] += counts[:-rank]
        counts = shifted
    return float(counts[observed:].sum() / counts.sum())


def harmonic_p(
    p_values: Sequence[float], weights: Sequence[float] | None = None, *, paper_literal: bool = False
) -> float:
    """Harmonic-mean p-value: plain M / Σ 1/p_j, or weighted 1 / Σ w_j/p_j (Σ w_j = 1)."""
    ps = np.maximum(np.asarray(p_values, float), P_FLOOR)
    if weights is None:
        total = float(np.sum(1 / ps))
        return (1 if paper_literal else len(ps)) / total
    w = np.asarray(weights, float)
    if not math.isclose(float(w.sum()), 1.0, abs_tol=1e-6):
        raise ValueError(f"weights must sum to 1, not {float(w.sum()):.6f}.")
    return 1 / float(np.sum(w / ps))


def discernment(p: float) -> float:
    """D = log_0.05(p); D > 1 means p < 0.05."""
    return math.log(max(p, P_FLOOR)) / _LN_005


@dataclass(frozen=True)
class PerturbationResult:
    level: str
    p_by_metric: dict[str, float]
    p: float
    p_ew: float
    D: float  # noqa: N815 (the paper's symbol)
    D_ew: float  # noqa: N815
    n: int  # texts tested (the fewest over the metrics): no default, so no caller can drop out of D_min by omission


def perturbation_result(
    level: str,
    p_by_metric: Mapping[str, float],
    weights: Mapping[str, float] | None,
    *,
    n: int,
    paper_literal: bool = False,
) -> PerturbationResult:
    metrics = list(p_by_metric)
    ps = [p_by_metric[m] for m in metrics]
    uniform = [1 / len(metrics)] * len(metrics)
    w = [weights[m] for m in metrics] if weights is not None else uniform
    p = harmonic_p(ps, paper_literal=paper_literal)
    p_ew = harmonic_p(ps, w)
    return PerturbationResult(level, dict(p_by_metric), p, p_ew, discernment(p), discernment(p_ew), n)


def summary(results: Mapping[str, PerturbationResult], min_items: int = MIN_ITEMS) -> dict[str, float | None]:
    """Level-balanced D_avg and D_min (over perturbations with at least `min_items` texts), plain and
    expert-weighted, and how many perturbations D_min was taken over."""

    def level_balanced(values: dict[str, list[float]]) -> float:
        means = [sum(v) / len(v) for v in values.values() if v]
        return sum(means) / len(means)

    by_level: dict[str, list[float]] = {}
    by_level_ew: dict[str, list[float]] = {}
    for result in results.values():
        by_level.setdefault(result.level, []).append(result.D)
        by_level_ew.setdefault(result.level, []).append(result.D_ew)
    enough = [r for r in results.values() if r.n >= min_items]
    return {
        "D_avg": level_balanced(by_level),
        "D_min": min(r.D for r in enough) if enough else None,
        "D_avg_ew": level_balanced(by_level_ew),
        "D_min_ew": min(r.D_ew for r in enough) if enough else None,
        "D_min_over": len(enough),
        "min_items": min_items,
    }


def describe_summary(values: Mapping[str, float | int | None]) -> str:
    """A summary as one line for a terminal, saying when D_min had no perturbation to be taken over."""

    def d(key: str) -> str:
        value = values.get(key)
        return f"{value:.2f}" if value is not None else f"— (no perturbation with {values.get('min_items')}+ texts)"

    return f"D_avg {d('D_avg')}, D_min {d('D_min')}, D_avg_ew {d('D_avg_ew')}, D_min_ew {d('D_min_ew')}"
