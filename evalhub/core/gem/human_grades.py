"""GEM's Table 1: each metric's response scores against people's grades of the same responses.

GEM, section 4.1: a response's score is its metric's mean over the other references of its task;
Spearman's ρ between those scores and the instructors' grades (A, B, C), pooled over every graded
response, with its p-value (two-sided, as scipy's `spearmanr` gives it). Beside the paper's two
figures evalhub gives n and a 95 % percentile bootstrap interval over responses, drawn only from
MIN_RESPONSES graded responses on.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from evalhub.core.statistics.rank_correlation import BOOTSTRAP, spearman
from evalhub.core.statistics.rank_correlation import MIN_ITEMS as MIN_RESPONSES

__all__ = ["MIN_RESPONSES", "GradeCorrelation", "grade_correlation", "grade_table"]
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class GradeCorrelation:
    metric: str
    n: int  # responses with both a score of this metric and a grade
    rho: float | None  # None where it is undefined: under 3 responses, or a constant side
    p_value: float | None
    low: float | None  # the 95 % interval, None below MIN_RESPONSES
    high: float | None


def grade_correlation(
    metric: str,
    scores: Mapping[K, float],
    grades: Mapping[K, float],
    resamples: int = BOOTSTRAP,
    seed: int = 0,
) -> GradeCorrelation:
    """Spearman's ρ of the metric's scores with the grades, over the responses that have both."""
    found = spearman(scores, grades, resamples, seed)
    return GradeCorrelation(metric, found.n, found.rho, found.p_value, found.low, found.high)


def grade_table(
    metrics: Sequence[tuple[str, Mapping[K, float]]],
    grades: Mapping[K, float],
    resamples: int = BOOTSTRAP,
    seed: int = 0,
) -> list[GradeCorrelation]:
    """Table 1's rows, in the order the metrics are given."""
    return [grade_correlation(name, scores, grades, resamples, seed) for name, scores in metrics]
