"""PPI++ extended: within strata (each its own weight), and with several judges' labels at once.
`evalhub.core.statistics.estimators` says when each serves; the formulas and their sources are there."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import t as student_t

from evalhub.core.statistics.ppi import MeanEstimate, Values, ppi_mean, z_for


def stratified_ppi_mean(
    y: Values,
    yhat: Values,
    strata: Sequence[str],
    yhat_unlabelled: Values,
    strata_unlabelled: Sequence[str],
    alpha: float = 0.05,
) -> MeanEstimate:
    """Stratified PPI++: PPI++ within each stratum (its own λ), weighted by the stratum's share of every
    judged pair. Every stratum needs 2 labelled pairs and 1 more (pool small ones with `strata_of`)."""
    labels, predicted, unlabelled = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    groups, groups_u = np.asarray(strata, dtype=object), np.asarray(strata_unlabelled, dtype=object)
    total = len(labels) + len(unlabelled)
    value = variance = label_variance = judge_term = 0.0
    for stratum in sorted(set(groups.tolist()) | set(groups_u.tolist())):
        mine, mine_u = groups == stratum, groups_u == stratum
        if mine.sum() < 2 or not mine_u.any():
            raise ValueError(f"stratum {stratum!r}: {int(mine.sum())} labelled and {int(mine_u.sum())} more pairs")
        part = ppi_mean(labels[mine], predicted[mine], unlabelled[mine_u], alpha)
        weight = (mine.sum() + mine_u.sum()) / total
        value += weight * part.value
        variance += weight**2 * part.standard_error**2
        # For "labels needed": at the same allocation, label n·share_k of n labels in stratum k.
        label_variance += weight**2 * part.label_variance * len(labels) / mine.sum()
        judge_term += weight**2 * part.judge_term
    se = float(np.sqrt(variance))
    z = z_for(alpha)
    n, big_n = len(labels), len(unlabelled)
    effective_n = float(np.var(labels)) / se**2 if se > 0 else float("inf")
    lam = float("nan")  # one per stratum: no single weight
    return MeanEstimate(
        value, value - z * se, value + z * se, se, n, big_n, lam, effective_n, label_variance, judge_term
    )


def multi_judge_weights(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> np.ndarray:
    """λ = ((1 + n/N)·Cov(Ŷ over every pair))⁻¹ · Cov(Ŷ, Y over the labelled ones): the variance-minimising
    weights of the judges' corrections (with one judge, PPI++'s λ before clipping)."""
    n, big_n = len(y), len(yhat_unlabelled)
    spread = np.atleast_2d(np.cov(np.concatenate([yhat, yhat_unlabelled]).T))
    cross = ((yhat - yhat.mean(0)) * (y - y.mean())[:, None]).mean(0)
    weights: np.ndarray = np.linalg.lstsq((1 + n / big_n) * spread, cross, rcond=None)[0]
    return weights


def multi_judge_ppi_mean(
    y: Values,
    yhat: np.ndarray,
    yhat_unlabelled: np.ndarray,
    alpha: float = 0.05,
    weights: Sequence[float] | None = None,
) -> MeanEstimate:
    """Several judges' corrections at once: `yhat` (n × k) and `yhat_unlabelled` (N × k), one column per
    judge, every judge on every pair. θ̂ = mean(Y − Ŷλ) + mean(Ŷ′)λ; SE² = Var(Y − Ŷλ)/n + λᵀCov(Ŷ′)λ/N,
    the first variance with k + 1 degrees of freedom taken and the interval's quantile Student's t with
    n − k − 1 where k ≥ 2 weights were tuned on the labels."""
    labels = np.asarray(y, dtype=float)
    predicted, unlabelled = np.atleast_2d(np.asarray(yhat, dtype=float)), np.asarray(yhat_unlabelled, dtype=float)
    if predicted.shape[0] != len(labels):
        predicted = predicted.T
    unlabelled = unlabelled.reshape(-1, predicted.shape[1])
    n, big_n = len(labels), len(unlabelled)
    if n < 2 or big_n < 2:
        raise ValueError(f"several judges' correction needs at least 2 labelled pairs and 2 more, got {n} and {big_n}")
    lam = multi_judge_weights(labels, predicted, unlabelled) if weights is None else np.asarray(weights, dtype=float)
    residual = labels - predicted @ lam
    value = float(residual.mean() + unlabelled.mean(0) @ lam)
    k = predicted.shape[1]
    # Several judges' weights tuned on these labels: the residual's variance with a degree of freedom for
    # each weight beside the mean, and Student's t with what is left (a regression's small-sample
    # correction). With the plain variance and z, three judges' 95 % intervals held the truth 92.4 % of
    # the time at 50 labels and 94.0 % at 100; now 94.2 % and 94.7 % (the test's 4,000 simulated sets
    # each). One judge keeps PPI++'s own form, as ppi-python computes it.
    fitted = weights is None and k > 1 and n > k + 2
    label_variance = float(np.var(residual, ddof=k + 1 if fitted else 0))
    judge_term = float(np.var(unlabelled @ lam) / big_n)
    se = float(np.sqrt(label_variance / n + judge_term))
    z = float(student_t.ppf(1 - alpha / 2, n - k - 1)) if fitted else z_for(alpha)
    effective_n = float(np.var(labels)) / se**2 if se > 0 else float("inf")
    single = float(lam[0]) if len(lam) == 1 else float("nan")  # several judges: no single weight
    return MeanEstimate(
        value, value - z * se, value + z * se, se, n, big_n, single, effective_n, label_variance, judge_term
    )
