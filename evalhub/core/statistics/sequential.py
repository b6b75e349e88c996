"""Intervals that stay valid however often you look: confidence sequences for a mean.

An ordinary 95 % interval promises 95 % coverage at one sample size fixed in advance. Looking after
every batch of labels and stopping when it is narrow enough breaks that promise: with a look after
every label the interval misses the truth at some look far more than 5 % of the time. A confidence
sequence (Darling & Robbins 1967; Howard, Ramdas, McAuliffe & Sekhon 2021) holds at every look at
once: P(the truth is outside the interval at any n) ≤ α.

This module gives the asymptotic confidence sequence of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas
("Time-uniform central limit theory and asymptotic confidence sequences", Annals of Statistics 2024,
Theorem 2.2): the running mean ± √(2(nσ̂²ρ² + 1)/(n²ρ²) · log(√(nσ̂²ρ² + 1)/α)), σ̂² the running
variance, ρ a tuning constant chosen to make the sequence narrowest near a planned n* (their eq. for
ρ(t*), for a unit variance): ρ² = (−2 log α + log(−2 log α + 1)) / (n*·v), with v fixed in advance at
¼, the largest variance a share in [0, 1] can have (ρ may not depend on the data). It is a
normal-mixture boundary (Robbins), valid as the number of labels grows, the way the usual interval
is. The price of looking at will is width: at α = 0.05 about 1.55 times the fixed-n interval's at
the planned n (variance ¼), and about 1.6 times at four times that n or at variance 0.1.

For a prediction-powered mean, people's terms Y − λŶ form the sequence; the judge's mean over the
pairs it judged is fixed before anyone looks, so its part gets an ordinary interval, and the two
share α by a union bound (`corrected_sequence`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

JUDGE_SHARE_OF_ALPHA = 0.1  # the part of α spent on the judge's fixed-N mean in a corrected sequence
PLANNED_N = 200  # where the pages' sequences are made narrowest: fixed in advance, never from the data


@dataclass(frozen=True)
class SequenceInterval:
    value: float
    low: float
    high: float
    n: int
    anytime_valid: bool = True


PLANNED_VARIANCE = 0.25  # a share in [0, 1] varies at most this much


def mixture_rho(alpha: float, planned_n: int, variance: float = PLANNED_VARIANCE) -> float:
    """The tuning ρ that makes the normal-mixture boundary narrowest at n = `planned_n` for data of
    this variance."""
    log_alpha = -2 * np.log(alpha)
    return float(np.sqrt((log_alpha + np.log(log_alpha + 1)) / (max(planned_n, 1) * variance)))


def half_width(n: int | np.ndarray, variance: float | np.ndarray, alpha: float, rho: float) -> np.ndarray:
    """The two-sided asymptotic confidence sequence's half-width after n observations of this variance."""
    n = np.asarray(n, dtype=float)
    scaled = n * np.asarray(variance, dtype=float) * rho**2 + 1
    out: np.ndarray = np.sqrt(2 * scaled / (n**2 * rho**2) * np.log(np.sqrt(scaled) / alpha))
    return out


def running(
    values: Sequence[float] | np.ndarray, alpha: float = 0.05, planned_n: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The confidence sequence at every prefix of `values`: (n, mean, low, high) arrays, one per look.
    The variance at each look is the running one (population form), so a look uses only what came so far."""
    data = np.asarray(values, dtype=float)
    n = np.arange(1, len(data) + 1)
    mean = np.cumsum(data) / n
    variance = np.maximum(np.cumsum(data**2) / n - mean**2, 0.0)
    rho = mixture_rho(alpha, planned_n or len(data))
    width = half_width(n, variance, alpha, rho)
    return n, mean, mean - width, mean + width


def mean_sequence(
    values: Sequence[float] | np.ndarray, alpha: float = 0.05, planned_n: int | None = None
) -> SequenceInterval:
    """The confidence sequence for a mean, at the latest look."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        raise ValueError(f"a confidence sequence needs at least 2 labels, got {len(data)}")
    n, mean, low, high = running(data, alpha, planned_n)
    return SequenceInterval(float(mean[-1]), float(low[-1]), float(high[-1]), int(n[-1]))


def corrected_sequence(
    y: Sequence[float],
    yhat: Sequence[float],
    yhat_unlabelled: Sequence[float],
    lam: float | Sequence[float] | np.ndarray,
    alpha: float = 0.05,
    planned_n: int | None = None,
) -> SequenceInterval:
    """A prediction-powered mean, mean(λ)·mean(Ŷ') + mean(Y − λŶ), with an interval valid at every look
    at people's labels: a confidence sequence for mean(Y − λŶ) at level (1 − s)α, plus an ordinary
    interval for mean(λ)·mean(Ŷ') at level sα (s = JUDGE_SHARE_OF_ALPHA), their half-widths added (a
    union bound). `lam`: one weight fixed in advance, or one per label chosen from the labels before it
    (`predictable_weights`); a weight chosen from all the labels, later ones included, would look ahead."""
    labelled, predicted, unlabelled = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    if len(labelled) != len(predicted):
        raise ValueError(f"{len(labelled)} people's labels but {len(predicted)} judge labels on the same items")
    if len(labelled) < 2 or len(unlabelled) < 1:
        raise ValueError("a corrected sequence needs at least 2 labelled items and 1 more")
    weights = np.broadcast_to(np.asarray(lam, dtype=float), labelled.shape)
    people = mean_sequence(labelled - weights * predicted, (1 - JUDGE_SHARE_OF_ALPHA) * alpha, planned_n)
    weight = float(weights.mean())
    judge_half = _judge_half(float(np.var(weight * unlabelled)) / len(unlabelled), alpha)
    value = weight * float(unlabelled.mean()) + people.value
    people_half = people.value - people.low
    return SequenceInterval(value, value - people_half - judge_half, value + people_half + judge_half, people.n)


def predictable_weights(y: Sequence[float], yhat: Sequence[float], yhat_unlabelled: Sequence[float]) -> np.ndarray:
    """PPI++'s λ for each label from the labels before it alone (`ppi.power_tuning` on each prefix; 0
    for the first two, which have no covariance to read): a weight that never looks ahead, as a
    confidence sequence's terms need (Waudby-Smith et al. 2024 take such predictable choices)."""
    labelled, predicted, unlabelled = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    n, big_n = len(labelled), len(unlabelled)
    out = np.zeros(n)
    if n < 3:
        return out
    before = np.arange(1, n)  # labels seen before label i (i = 1 … n − 1)
    sum_y, sum_p = np.cumsum(labelled)[:-1], np.cumsum(predicted)[:-1]
    sum_yp, sum_pp = np.cumsum(labelled * predicted)[:-1], np.cumsum(predicted**2)[:-1]
    covariance = sum_yp / before - (sum_y / before) * (sum_p / before)
    # The spread of the judge's labels over those labelled so far and every unlabelled one (ddof 1).
    pooled = before + big_n
    pooled_mean = (sum_p + unlabelled.sum()) / pooled
    spread = (sum_pp + float((unlabelled**2).sum()) - pooled * pooled_mean**2) / np.maximum(pooled - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tuned = np.where(spread > 0, covariance / ((1 + before / big_n) * spread), 0.0)
    out[1:] = np.clip(tuned, 0.0, 1.0)
    out[:2] = 0.0
    return out


def _judge_half(judge_term: float, alpha: float) -> float:
    """The judge's fixed-N part of a corrected sequence: an ordinary interval at level sα."""
    return float(norm.ppf(1 - JUDGE_SHARE_OF_ALPHA * alpha / 2) * np.sqrt(judge_term))


MOST_LABELS = 10**8


def labels_for(
    label_variance: float, judge_term: float, target: float, alpha: float = 0.05, planned_n: int = PLANNED_N
) -> int | None:
    """The fewest people's labels after which a corrected sequence (`corrected_sequence`: terms of this
    variance, the judge's part of this variance) is ± `target`, at the same judge weight; None where the
    judge's part alone is wider, or no number of labels up to MOST_LABELS gets there."""
    room = target - _judge_half(judge_term, alpha)
    people_alpha = (1 - JUDGE_SHARE_OF_ALPHA) * alpha
    rho = mixture_rho(people_alpha, planned_n)

    def within(n: int) -> bool:
        return bool(half_width(n, label_variance, people_alpha, rho) <= room)

    if room <= 0 or not within(MOST_LABELS):
        return None
    low, high = 1, 2
    while not within(high):  # the half-width shrinks with n from its first few labels on: bracket, then bisect
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if within(middle) else (middle, high)
    return max(2, high)
