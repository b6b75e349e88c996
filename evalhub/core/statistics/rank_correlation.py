"""Spearman's ρ between two keyed sets of numbers, with its p-value and a bootstrap interval.

ρ and the two-sided p are scipy's `spearmanr` (ties get average ranks). The interval is the 95 %
percentile bootstrap over the shared keys, drawn only from MIN_ITEMS keys on: below that a figure
shows its value and n, and no interval. ρ is undefined (None) under 3 keys or where one side is
constant.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from scipy.stats import spearmanr

MIN_ITEMS = 10
BOOTSTRAP = 1000
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class RankCorrelation:
    n: int  # keys with a value on both sides
    rho: float | None
    p_value: float | None
    low: float | None  # the 95 % interval, None below MIN_ITEMS
    high: float | None


def _rho(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(spearmanr(x, y).statistic)


def spearman(
    left: Mapping[K, float], right: Mapping[K, float], resamples: int = BOOTSTRAP, seed: int = 0
) -> RankCorrelation:
    """Spearman's ρ of `left` with `right` over the keys both have."""
    shared = [key for key in left if key in right]
    x = np.array([left[key] for key in shared], dtype=float)
    y = np.array([right[key] for key in shared], dtype=float)
    rho = _rho(x, y)
    p_value = None
    if rho is not None:
        p = float(spearmanr(x, y).pvalue)
        p_value = None if math.isnan(p) else p
    low = high = None
    if rho is not None and len(shared) >= MIN_ITEMS:
        rng = np.random.default_rng(seed)
        draws = [
            value
            for index in rng.integers(0, len(shared), size=(resamples, len(shared)))
            if (value := _rho(x[index], y[index])) is not None
        ]
        if draws:
            low, high = (float(v) for v in np.percentile(draws, [2.5, 97.5]))
    return RankCorrelation(len(shared), rho, p_value, low, high)
