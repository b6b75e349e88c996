"""Prediction-powered inference for a mean: a judge's many labels corrected by people's few.

PPI (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference", Science 2023)
estimates a mean from n items people labelled (Y, with the judge's label Ŷ on the same items) and N
items only the judge labelled (Ŷ'). PPI++ (Angelopoulos, Duchi, Zrnic, arXiv:2311.01453, 2023)
weighs the judge by a power-tuning λ ∈ [0, 1]:

    θ̂_λ = λ·mean(Ŷ') + mean(Y − λ·Ŷ)
    SE² = Var(λ·Ŷ')/N + Var(Y − λ·Ŷ)/n
    λ*  = Cov(Y, Ŷ) / ((1 + n/N)·Var(Ŷ ∪ Ŷ'))      (clipped to [0, 1])

The interval θ̂ ± z·SE is valid whatever the judge's errors (they are measured on the labelled
items); λ = 0 gives people's mean alone, λ = 1 plain PPI. The variances follow ppi-python's
`ppi_mean_ci` (population variances in the SE, sample variance of all judge labels in λ), which
the tests check this against.

Items people labelled can also be chosen by a rule (active inference, Zrnic & Candès, "Active
statistical inference", ICML 2024): item i labelled with probability π_i, its correction weighted
by 1/π_i, keeps the estimate unbiased (see `active_mean`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm


@dataclass(frozen=True)
class MeanEstimate:
    value: float
    low: float
    high: float
    standard_error: float
    n_labelled: int  # items people labelled
    n_unlabelled: int  # items only the judge labelled
    lam: float  # the judge's weight: 0 people only, 1 plain PPI
    effective_n: float  # people's labels a people-only estimate would need for the same SE

    def scaled(self, factor: float) -> MeanEstimate:
        """The same estimate in other units (e.g. percent)."""
        return MeanEstimate(
            self.value * factor,
            self.low * factor,
            self.high * factor,
            self.standard_error * factor,
            self.n_labelled,
            self.n_unlabelled,
            self.lam,
            self.effective_n,
        )


def _z(alpha: float) -> float:
    return float(norm.ppf(1 - alpha / 2))


def classical_mean(y: Sequence[float], alpha: float = 0.05) -> MeanEstimate:
    """People's labels alone: the mean with its normal interval (the population SD / √n, as ppi-python's
    classical_mean_ci and the corrected estimate's own variances, so the two compare like for like)."""
    values = np.asarray(y, dtype=float)
    n = len(values)
    if n < 2:
        raise ValueError(f"a mean with an interval needs at least 2 labels, got {n}")
    se = float(values.std() / np.sqrt(n))
    mean = float(values.mean())
    return MeanEstimate(mean, mean - _z(alpha) * se, mean + _z(alpha) * se, se, n, 0, 0.0, float(n))


def power_tuning(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """PPI++'s λ* for a mean, clipped to [0, 1]."""
    n, big_n = len(y), len(yhat_unlabelled)
    covariance = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    spread = float(np.var(np.concatenate([yhat, yhat_unlabelled]), ddof=1))
    if spread == 0:
        return 0.0  # a judge that says the same of everything carries no information
    return float(np.clip(covariance / ((1 + n / big_n) * spread), 0.0, 1.0))


def ppi_mean(
    y: Sequence[float],
    yhat: Sequence[float],
    yhat_unlabelled: Sequence[float],
    alpha: float = 0.05,
    lam: float | None = None,
) -> MeanEstimate:
    """The judge's mean corrected by people's labels (PPI++; `lam=None` tunes λ from the data)."""
    labelled, predicted, unlabelled = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    n, big_n = len(labelled), len(unlabelled)
    if len(predicted) != n:
        raise ValueError(f"{n} people's labels but {len(predicted)} judge labels on the same items")
    if n < 2 or big_n < 1:
        raise ValueError(f"a corrected mean needs at least 2 labelled items and 1 more, got {n} and {big_n}")
    weight = power_tuning(labelled, predicted, unlabelled) if lam is None else float(lam)
    value = float(weight * unlabelled.mean() + (labelled - weight * predicted).mean())
    se = float(np.sqrt(np.var(weight * unlabelled) / big_n + np.var(labelled - weight * predicted) / n))
    effective_n = float(np.var(labelled)) / se**2 if se > 0 else float("inf")
    z = _z(alpha)
    return MeanEstimate(value, value - z * se, value + z * se, se, n, big_n, weight, effective_n)


def active_mean(
    yhat_all: Sequence[float],
    labelled: Sequence[bool],
    y: Sequence[float],
    probability: Sequence[float],
    alpha: float = 0.05,
) -> MeanEstimate:
    """The mean over all items from the judge's labels and people's labels on items chosen at random
    with known probabilities π_i (active inference): θ̂ = mean_i[Ŷ_i + (Y_i − Ŷ_i)·ξ_i/π_i], ξ_i = 1 if
    item i was labelled. Unbiased for any rule with π_i > 0; the SE is the sample SD of the terms / √N.
    `y` holds people's labels for the labelled items only, in item order."""
    predicted = np.asarray(yhat_all, dtype=float)
    chosen = np.asarray(labelled, dtype=bool)
    chance = np.asarray(probability, dtype=float)
    if (chance <= 0).any() or (chance > 1).any():
        raise ValueError("every item needs a probability of being labelled in (0, 1]")
    people = np.zeros_like(predicted)
    people[chosen] = np.asarray(y, dtype=float)
    terms = predicted + np.where(chosen, (people - predicted) / chance, 0.0)
    big_n = len(terms)
    value, se = float(terms.mean()), float(terms.std(ddof=1) / np.sqrt(big_n))
    n = int(chosen.sum())
    labels_var = float(np.var(people[chosen])) if n > 1 else float("nan")
    z = _z(alpha)
    return MeanEstimate(value, value - z * se, value + z * se, se, n, big_n - n, 1.0, labels_var / se**2)


def labelling_probabilities(uncertainty: Sequence[float], budget: float, floor: float = 0.05) -> np.ndarray:
    """π_i = clip(c·u_i, floor, 1) with c chosen so that Σπ = `budget` (the expected number of labels):
    label where the judge is least sure (u_i, e.g. √(p(1−p)) of its preference; Zrnic & Candès's rule
    for a mean), with every item at least `floor` so no weight 1/π grows without bound."""
    weights: np.ndarray = np.maximum(np.asarray(uncertainty, dtype=float), 0.0)
    count = len(weights)
    if count == 0:
        return weights
    budget = float(np.clip(budget, floor * count, count))
    if not weights.any():
        return np.full(count, budget / count)
    low, high = 0.0, 1.0
    while np.clip(high * weights, floor, 1.0).sum() < budget:  # Σπ grows with c: bracket, then bisect
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if np.clip(middle * weights, floor, 1.0).sum() < budget else (low, middle)
    chance: np.ndarray = np.clip(high * weights, floor, 1.0)
    return chance
