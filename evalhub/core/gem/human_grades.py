"""GEM's Table 1: each metric's response scores against people's grades of the same responses.

GEM, section 4.1: a response's score is its metric's mean over the other references of its task;
Spearman's ρ between those scores and the instructors' grades (A, B, C), pooled over every graded
response, with its p-value (two-sided, as scipy's `spearmanr` gives it). Beside the paper's two
figures evalhub gives n and a 95 % percentile bootstrap interval over responses, drawn only from
MIN_RESPONSES graded responses on.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from scipy.stats import spearmanr

MIN_RESPONSES = 10
BOOTSTRAP = 1000
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class GradeCorrelation:
    metric: str
    n: int  # responses with both a score of this metric and a grade
    rho: float | None  # None where it is undefined: under 3 responses, or a constant side
    p_value: float | None
    low: float | None  # the 95 % interval, None below MIN_RESPONSES
    high: float | None


def _rho(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(spearmanr(x, y).statistic)


def grade_correlation(
    metric: str,
    scores: Mapping[K, float],
    grades: Mapping[K, float],
    resamples: int = BOOTSTRAP,
    seed: int = 0,
) -> GradeCorrelation:
    """Spearman's ρ of the metric's scores with the grades, over the responses that have both."""
    shared = [key for key in scores if key in grades]
    x = np.array([scores[key] for key in shared], dtype=float)
    y = np.array([grades[key] for key in shared], dtype=float)
    rho = _rho(x, y)
    p_value = None
    if rho is not None:
        p = float(spearmanr(x, y).pvalue)
        p_value = None if math.isnan(p) else p
    low = high = None
    if rho is not None and len(shared) >= MIN_RESPONSES:
        rng = np.random.default_rng(seed)
        draws = [
            value
            for index in rng.integers(0, len(shared), size=(resamples, len(shared)))
            if (value := _rho(x[index], y[index])) is not None
        ]
        if draws:
            low, high = (float(v) for v in np.percentile(draws, [2.5, 97.5]))
    return GradeCorrelation(metric, len(shared), rho, p_value, low, high)


def grade_table(
    metrics: Sequence[tuple[str, Mapping[K, float]]],
    grades: Mapping[K, float],
    resamples: int = BOOTSTRAP,
    seed: int = 0,
) -> list[GradeCorrelation]:
    """Table 1's rows, in the order the metrics are given."""
    return [grade_correlation(name, scores, grades, resamples, seed) for name, scores in metrics]
