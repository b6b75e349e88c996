"""GEM's Table 1 (Spearman's ρ of a metric's response scores with people's grades) against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import spearmanr

from evalhub.core.gem.human_grades import MIN_RESPONSES, grade_correlation, grade_table


def test_rho_and_p_equal_scipys_with_tied_grades_and_responses_only_one_side_has():
    rng = np.random.default_rng(3)
    grades = {n: float(rng.integers(1, 4)) for n in range(40)}  # A / B / C: many ties
    scores = {n: grades.get(n, 2.0) + rng.normal(0, 1.0) for n in range(5, 45)}  # 5 unscored, 5 ungraded
    row = grade_correlation("GEM", scores, grades, resamples=200)
    shared = range(5, 40)
    expected = spearmanr([scores[n] for n in shared], [grades[n] for n in shared])
    assert row.n == 35
    assert row.rho == pytest.approx(expected.statistic, abs=1e-12)
    assert row.p_value == pytest.approx(expected.pvalue, rel=1e-9)
    assert row.low < row.rho < row.high


def test_below_the_minimum_the_value_and_n_are_shown_and_no_interval():
    grades = {n: float(n % 3) for n in range(MIN_RESPONSES - 1)}
    row = grade_correlation("GEM", {n: float(n) for n in grades}, grades)
    assert row.n == MIN_RESPONSES - 1 and row.rho is not None
    assert (row.low, row.high) == (None, None)


def test_a_metric_that_gives_every_response_the_same_score_has_no_correlation():
    grades = {n: float(n % 3) for n in range(20)}
    row = grade_correlation("constant", dict.fromkeys(grades, 0.5), grades)
    assert (row.rho, row.p_value, row.low) == (None, None, None)
    assert row.n == 20


def test_the_interval_narrows_as_responses_grow_and_covers_a_planted_correlation():
    rng = np.random.default_rng(0)

    def width(n: int) -> tuple[float, float, float]:
        grades = {i: float(rng.integers(1, 4)) for i in range(n)}
        scores = {i: grades[i] + rng.normal(0, 0.8) for i in range(n)}
        row = grade_correlation("noisy", scores, grades, resamples=400)
        return row.high - row.low, row.low, row.high

    small, *_ = width(20)
    large, low, high = width(2000)
    assert large < small / 4
    # The planted ρ, from a very large sample of the same design.
    grades = rng.integers(1, 4, 200_000).astype(float)
    planted = spearmanr(grades + rng.normal(0, 0.8, len(grades)), grades).statistic
    assert low <= planted <= high


def test_the_table_keeps_the_metrics_order():
    grades = {n: float(n % 3) for n in range(12)}
    table = grade_table(
        [("GEM-raw", {n: -float(n % 3) for n in grades}), ("GEM", {n: float(n) for n in grades})], grades
    )
    assert [row.metric for row in table] == ["GEM-raw", "GEM"]
    assert table[0].rho == pytest.approx(-1.0)
