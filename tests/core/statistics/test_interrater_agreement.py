"""Agreement between people, against hand-computed values and independent implementations."""

from __future__ import annotations

import random

import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

from evalhub.core.statistics.agreement import cohen_kappa, fleiss_kappa, percent_agreement, rating_table


def test_cohen_kappa_by_hand():
    # Observed 3/4 = 0.75; each rater uses 1 twice and 2 twice → expected 0.5; kappa = 0.25 / 0.5.
    assert cohen_kappa([1, 1, 2, 2], [1, 2, 2, 2]) == pytest.approx((0.75 - 0.5) / 0.5)
    assert percent_agreement([1, 1, 2, 2], [1, 2, 2, 2]).rate == 0.75


@pytest.mark.parametrize("seed", range(6))
def test_cohen_kappa_matches_scikit_learn(seed):
    rng = random.Random(seed)
    a = [rng.choice([0, 1, 2]) for _ in range(40)]
    b = [x if rng.random() < 0.6 else rng.choice([0, 1, 2]) for x in a]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))


def test_cohen_kappa_edge_cases():
    assert cohen_kappa([], []) is None
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0
    assert cohen_kappa([1, 2], [2, 1]) == pytest.approx(cohen_kappa_score([1, 2], [2, 1]))


def test_fleiss_kappa_by_hand():
    # Two items, three raters. Item 1: all say 1 → P_1 = 1; item 2: two say 2, one says 0 → P_2 = (4+1-3)/6 = 1/3.
    # P̄ = 2/3; shares: 0 → 1/6, 1 → 3/6, 2 → 2/6; P_e = (1 + 9 + 4)/36 = 14/36; kappa = (2/3 − 14/36)/(1 − 14/36).
    table = rating_table({"i1": [1, 1, 1], "i2": [2, 2, 0]})
    assert table == [[0, 3, 0], [1, 0, 2]]
    assert fleiss_kappa(table) == pytest.approx((2 / 3 - 14 / 36) / (1 - 14 / 36))


@pytest.mark.parametrize("seed", range(6))
def test_fleiss_kappa_matches_statsmodels(seed):
    rng = random.Random(seed)
    ratings = {}
    for item in range(30):
        truth = rng.choice([0, 1, 2])
        ratings[item] = [truth if rng.random() < 0.7 else rng.choice([0, 1, 2]) for _ in range(3)]
    table = rating_table(ratings)
    assert fleiss_kappa(table) == pytest.approx(statsmodels_fleiss(table))


def test_fleiss_kappa_needs_the_same_number_of_raters_per_item():
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa([[1, 1, 0], [3, 0, 0]])
