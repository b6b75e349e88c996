"""The optimism-bias report against hand computations and scipy."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from evalhub.core.yescieval.optimism import optimism_report, shift


def test_a_shift_by_hand():
    benign, extreme = [5, 5, 4, 4], [1, 2, 4, 1]
    result = shift(benign, extreme)
    differences = [4, 3, 0, 3]  # mean 2.5, sd √3 → half-width t(0.975, 3)·√3/2
    half = stats.t.ppf(0.975, 3) * math.sqrt(3) / 2
    assert (result.mean_benign, result.mean_adversarial, result.drop) == (4.5, 2.0, 2.5)
    assert (result.drop_low, result.drop_high) == pytest.approx((2.5 - half, 2.5 + half))
    assert result.retention == pytest.approx(2.0 / 4.5)
    assert result.optimistic_share == 0.25
    assert result.p == pytest.approx(stats.wilcoxon(benign, extreme, alternative="greater").pvalue)
    assert stats.tstd(differences) == pytest.approx(math.sqrt(3))


def test_an_unfooled_and_a_fooled_judge():
    rows = []
    for item in range(12):
        rows += [
            ("strict", "cohesion", f"q{item}", "benign", 5),
            ("strict", "cohesion", f"q{item}", "subtle", 3),
            ("strict", "cohesion", f"q{item}", "extreme", 1),
            ("optimist", "cohesion", f"q{item}", "benign", 5),
            ("optimist", "cohesion", f"q{item}", "subtle", 5),
            ("optimist", "cohesion", f"q{item}", "extreme", 4 + item % 2),
        ]
    report = optimism_report(rows)
    strict, optimist = report["strict"]["cohesion"], report["optimist"]["cohesion"]
    assert strict["extreme"].drop == 4
    assert strict["extreme"].optimistic_share == 0
    assert strict["extreme"].p < 0.001
    assert optimist["subtle"].drop == 0
    assert optimist["subtle"].p == 1.0
    assert optimist["subtle"].retention == 1.0
    assert optimist["extreme"].optimistic_share == 1.0
    assert optimist["extreme"].retention == pytest.approx(0.9)
    assert report["strict"]["all"]["extreme"].n == 12


def test_items_without_a_benign_rating_or_with_an_invalid_one_are_left_out():
    rows = [
        ("j", "relevancy", "a", "benign", 5),
        ("j", "relevancy", "a", "extreme", 2),
        ("j", "relevancy", "b", "extreme", 1),  # no benign rating for b
        ("j", "relevancy", "c", "benign", 4),
        ("j", "relevancy", "c", "extreme", float("nan")),  # invalid: not counted as a low score
    ]
    result = optimism_report(rows)["j"]["relevancy"]["extreme"]
    assert result.n == 1
    assert result.drop == 3
    assert result.as_dict()["drop_low"] == 3


def test_an_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="benign, subtle or extreme"):
        optimism_report([("j", "r", "a", "harsh", 1)])
