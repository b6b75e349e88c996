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

Prediction-powered Bradley–Terry ratings (logistic regression) are in `logistic_ppi` and `corrected_ratings`.

Items people labelled can also be chosen by a rule (active inference, Zrnic & Candès, "Active
statistical inference", ICML 2024): item i labelled with probability π_i, its correction weighted
by 1/π_i, keeps the estimate unbiased (see `active_mean`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from scipy.optimize import nnls
from scipy.stats import norm

Rows = np.ndarray  # a design matrix or a vector of labels
Values = Sequence[float] | np.ndarray


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
    # SE² = label_variance / n + judge_term: what more labels shrink, and what they leave (the judge's own).
    label_variance: float = float("nan")
    judge_term: float = 0.0

    def scaled(self, factor: float) -> MeanEstimate:
        """The same estimate in other units (e.g. percent)."""
        return replace(
            self,
            value=self.value * factor,
            low=self.low * factor,
            high=self.high * factor,
            standard_error=self.standard_error * factor,
            label_variance=self.label_variance * factor**2,
            judge_term=self.judge_term * factor**2,
        )

    def labels_for(self, half_width: float, alpha: float = 0.05) -> int | None:
        return labels_needed(self.label_variance, self.judge_term, half_width, alpha)


def labels_needed(label_variance: float, judge_term: float, half_width: float, alpha: float = 0.05) -> int | None:
    """People's labels an interval needs to be ± `half_width` when SE² = label_variance / n + judge_term
    (at the same judge weight and as many pairs judged); None when the judge's own term alone is wider."""
    room = (half_width / z_for(alpha)) ** 2 - judge_term
    if room <= 0 or not np.isfinite(label_variance):
        return None
    return max(2, int(np.ceil(label_variance / room)))


@lru_cache(maxsize=16)
def z_for(alpha: float) -> float:
    """The two-sided normal quantile for `alpha`: asked once per level, not per estimate (scipy's ppf
    was a tenth of the win-rate boards' refresh at 10,000 corrected rows)."""
    return float(norm.ppf(1 - alpha / 2))


def classical_mean(y: Values, alpha: float = 0.05) -> MeanEstimate:
    """People's labels alone: the mean with its normal interval (the population SD / √n, as ppi-python's
    classical_mean_ci and the corrected estimate's own variances, so the two compare like for like)."""
    values = np.asarray(y, dtype=float)
    n = len(values)
    if n < 2:
        raise ValueError(f"a mean with an interval needs at least 2 labels, got {n}")
    se = float(values.std() / np.sqrt(n))
    mean = float(values.mean())
    return MeanEstimate(
        mean,
        mean - z_for(alpha) * se,
        mean + z_for(alpha) * se,
        se,
        n,
        0,
        0.0,
        float(n),
        label_variance=float(values.var()),
    )


def power_tuning(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """PPI++'s λ* for a mean, clipped to [0, 1]."""
    n, big_n = len(y), len(yhat_unlabelled)
    covariance = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    spread = float(np.var(np.concatenate([yhat, yhat_unlabelled]), ddof=1))
    if spread == 0:
        return 0.0  # a judge that says the same of everything carries no information
    return float(np.clip(covariance / ((1 + n / big_n) * spread), 0.0, 1.0))


def ppi_mean(
    y: Values,
    yhat: Values,
    yhat_unlabelled: Values,
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
    label_variance = float(np.var(labelled - weight * predicted))
    judge_term = float(np.var(weight * unlabelled) / big_n)
    se = float(np.sqrt(judge_term + label_variance / n))
    effective_n = float(np.var(labelled)) / se**2 if se > 0 else float("inf")
    z = z_for(alpha)
    return MeanEstimate(
        value, value - z * se, value + z * se, se, n, big_n, weight, effective_n, label_variance, judge_term
    )


def active_mean(
    yhat_all: Values,
    labelled: Sequence[bool] | np.ndarray,
    y: Values,
    probability: Values,
    alpha: float = 0.05,
    lam: float | None = None,
) -> MeanEstimate:
    """The mean over all items from the judge's labels and people's labels on items chosen at random
    with known probabilities π_i (active inference, Zrnic & Candès 2024, with their power tuning):
    θ̂ = mean_i[λ·Ŷ_i + (Y_i − λ·Ŷ_i)·ξ_i/π_i], ξ_i = 1 if item i was labelled. Unbiased for any λ and
    any rule with π_i > 0; `lam=None` takes the λ ∈ [0, 1] that minimises the terms' variance. The SE is
    the sample SD of the terms / √N. `y` holds people's labels for the labelled items only, in item order.
    With every π_i = n/N it is PPI's estimate over all N items."""
    predicted = np.asarray(yhat_all, dtype=float)
    chosen = np.asarray(labelled, dtype=bool)
    chance = np.asarray(probability, dtype=float)
    if (chance <= 0).any() or (chance > 1).any():
        raise ValueError("every item needs a probability of being labelled in (0, 1]")
    n = int(chosen.sum())
    if n < 2 or len(predicted) - n < 1:
        rest = len(predicted) - n
        raise ValueError(f"a corrected mean needs at least 2 labelled items and 1 more, got {n} and {rest}")
    people = np.zeros_like(predicted)
    people[chosen] = np.asarray(y, dtype=float)
    weight = np.where(chosen, 1.0 / chance, 0.0)
    # terms = B + λ·A: people's weighted label, and the judge's part that the weighting cancels on average
    label_part, judge_part = people * weight, predicted * (1.0 - weight)
    if lam is None:
        spread = float(np.var(judge_part))
        covariance = float(np.mean((judge_part - judge_part.mean()) * (label_part - label_part.mean())))
        lam = float(np.clip(-covariance / spread, 0.0, 1.0)) if spread > 0 else 0.0
    terms = label_part + lam * judge_part
    big_n = len(terms)
    value, se = float(terms.mean()), float(terms.std(ddof=1) / np.sqrt(big_n))
    labels_var = float(np.var(people[chosen]))
    z = z_for(alpha)
    return MeanEstimate(
        value, value - z * se, value + z * se, se, n, big_n - n, float(lam), labels_var / se**2 if se > 0 else np.inf
    )


def expected_error(yhat_labelled: Values, y: Values, yhat: Values) -> np.ndarray:
    """How far people are expected to be from the judge on each item, √E[(Y − Ŷ)² | Ŷ], learnt from the
    items people labelled so far: E[(Y − Ŷ)²] = a·Ŷ(1 − Ŷ) + b with a, b ≥ 0 fitted by least squares
    (a calibrated judge's own uncertainty, a = 1 and b = 0, plus the error it does not know it makes).
    Two numbers, so a few dozen labels suffice; a judge with plain verdicts (Ŷ ∈ {0, ½, 1}) gets one
    error for its ties and one for its wins. With fewer than 10 labels, a = 1 and b = 0."""
    known, labels, every = (np.asarray(v, dtype=float) for v in (yhat_labelled, y, yhat))
    spread = np.clip(every * (1 - every), 0.0, None)
    if len(labels) < 10:
        own: np.ndarray = np.sqrt(spread)
        return own
    design = np.column_stack([np.clip(known * (1 - known), 0.0, None), np.ones(len(known))])
    (a, b), _ = nnls(design, (labels - known) ** 2)
    if a == 0 and b == 0:  # people agree exactly with the judge so far: nothing to prefer
        return np.ones(len(every))
    out: np.ndarray = np.sqrt(a * spread + b)
    return out


def inclusion_probability(prior_share: float, chances: Sequence[Sequence[float]]) -> np.ndarray:
    """The chance each item had of being labelled at all: labelled beforehand by a uniform draw (the share
    `prior_share` of items, as PPI assumes of labels it did not choose), or drawn in any later round k with
    chance π_k,i (a round draws over every item; one already labelled needs no new label)."""
    rounds = np.asarray(chances, dtype=float)
    missed = (1.0 - float(prior_share)) * np.prod(1.0 - rounds, axis=0)
    out: np.ndarray = 1.0 - missed
    return out


def labelling_probabilities(uncertainty: Values, budget: float, floor: float = 0.2) -> np.ndarray:
    """π_i = clip(c·u_i, floor·budget/N, 1) with c chosen so that Σπ = `budget` (the expected number of
    labels): label where the judge is least sure (u_i, e.g. its expected error; Zrnic & Candès's rule
    for a mean, π ∝ √E[(Y − Ŷ)²]), with every item at least `floor` times the uniform chance so that no
    weight 1/π grows without bound (their mixing with the uniform rule, for the same reason)."""
    weights: np.ndarray = np.maximum(np.asarray(uncertainty, dtype=float), 0.0)
    count = len(weights)
    if count == 0:
        return weights
    budget = float(np.clip(budget, 1e-9, count))
    least = min(1.0, floor * budget / count)
    if not weights.any():
        return np.full(count, budget / count)
    low, high = 0.0, 1.0
    while np.clip(high * weights, least, 1.0).sum() < budget:  # Σπ grows with c: bracket, then bisect
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if np.clip(middle * weights, least, 1.0).sum() < budget else (low, middle)
    chance: np.ndarray = np.clip(high * weights, least, 1.0)
    return chance
