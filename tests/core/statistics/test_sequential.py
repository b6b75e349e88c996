"""Confidence sequences: valid at every look, where ordinary intervals with the same looks are not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from evalhub.core.statistics.sequential import (
    corrected_sequence,
    half_width,
    mean_sequence,
    mixture_rho,
    running,
)


def test_the_half_width_is_robbins_two_sided_normal_mixture_boundary_over_n():
    """|S_n| ≥ √((n + 1/ρ'²)·log((nρ'² + 1)/α²)), ρ' = σρ (Robbins 1970), divided by n."""
    for n, variance, alpha, rho in [(10, 0.25, 0.05, 0.3), (1000, 0.04, 0.1, 0.05), (3, 1.0, 0.01, 1.2)]:
        r2 = variance * rho**2
        sum_bound = np.sqrt((n + 1 / r2) * np.log((n * r2 + 1) / alpha**2)) * np.sqrt(variance)
        assert half_width(n, variance, alpha, rho) == pytest.approx(sum_bound / n, rel=1e-12)


def test_the_tuning_makes_the_sequence_narrowest_at_the_planned_number_of_labels():
    alpha, planned = 0.05, 400
    rho = mixture_rho(alpha, planned)
    rhos = rho * np.exp(np.linspace(-1, 1, 201))
    widths = [float(half_width(planned, 0.25, alpha, r)) for r in rhos]
    # Their closed form is the optimum of an approximation: within a percent of the exact one.
    assert float(half_width(planned, 0.25, alpha, rho)) <= 1.01 * min(widths)


def test_a_look_uses_only_the_labels_so_far():
    data = np.random.default_rng(0).uniform(size=50)
    n, mean, low, high = running(data, planned_n=50)
    for look in (2, 17, 50):
        alone = running(data[:look], planned_n=50)
        assert (alone[1][-1], alone[2][-1], alone[3][-1]) == pytest.approx(
            (mean[look - 1], low[look - 1], high[look - 1])
        )
    assert mean_sequence(data, planned_n=50).low == pytest.approx(low[-1])


def test_with_a_look_after_every_label_the_sequence_keeps_its_promise_and_the_ordinary_interval_does_not():
    rng = np.random.default_rng(1)
    runs, looks, truth, alpha = 2000, 500, 0.3, 0.05
    data = (rng.uniform(size=(runs, looks)) < truth).astype(float)
    n = np.arange(1, looks + 1)
    mean = np.cumsum(data, axis=1) / n
    variance = np.maximum(np.cumsum(data**2, axis=1) / n - mean**2, 0.0)
    width = half_width(n, variance, alpha, mixture_rho(alpha, looks))
    start = 10  # both from the tenth label on, where the ordinary interval is drawn at all
    ever_missed = (np.abs(mean - truth) > width)[:, start:].any(axis=1).mean()
    ordinary = norm.ppf(1 - alpha / 2) * np.sqrt(variance / n)
    ordinary_missed = (np.abs(mean - truth) > ordinary)[:, start:].any(axis=1).mean()
    assert ever_missed <= alpha, ever_missed
    assert ordinary_missed > 3 * alpha, ordinary_missed


def test_the_corrected_sequence_is_the_prediction_powered_mean_with_a_wider_interval_for_looking():
    rng = np.random.default_rng(2)
    y = (rng.uniform(size=200) < 0.6).astype(float)
    yhat = np.clip(y * 0.7 + rng.uniform(0, 0.3, 200), 0, 1)
    unlabelled = rng.uniform(0.2, 1.0, 5000)
    lam = 0.8
    out = corrected_sequence(y, yhat, unlabelled, lam)
    assert out.value == pytest.approx(lam * unlabelled.mean() + (y - lam * yhat).mean())
    fixed_half = 1.96 * np.sqrt(np.var(y - lam * yhat) / 200 + lam**2 * np.var(unlabelled) / 5000)
    assert out.high - out.value > fixed_half, "looking at will costs width"
    assert out.n == 200 and out.anytime_valid
    with pytest.raises(ValueError, match="at least 2 labelled"):
        corrected_sequence(y[:1], yhat[:1], unlabelled, lam)


def test_labels_for_a_target_width_are_the_fewest_whose_sequence_is_that_narrow():
    from evalhub.core.statistics.ppi import labels_needed
    from evalhub.core.statistics.sequential import JUDGE_SHARE_OF_ALPHA, PLANNED_N, labels_for

    variance, judge_term, target = 0.12, 1e-5, 0.05
    needed = labels_for(variance, judge_term, target)
    people_alpha = (1 - JUDGE_SHARE_OF_ALPHA) * 0.05
    rho = mixture_rho(people_alpha, PLANNED_N)
    judge_half = norm.ppf(1 - JUDGE_SHARE_OF_ALPHA * 0.05 / 2) * np.sqrt(judge_term)

    def width(n: int) -> float:
        return float(half_width(n, variance, people_alpha, rho)) + judge_half

    assert width(needed) <= target < width(needed - 1)
    assert needed > labels_needed(variance, judge_term, target), "looking at will needs more labels"
    assert labels_for(variance, 0.01, target) is None, "the judge's own part alone is wider"


def test_each_labels_weight_is_ppi_plus_plus_tuned_on_the_labels_before_it_alone():
    from evalhub.core.statistics.ppi import power_tuning
    from evalhub.core.statistics.sequential import predictable_weights

    rng = np.random.default_rng(4)
    y = (rng.uniform(size=60) < 0.6).astype(float)
    yhat = np.clip(y * 0.6 + rng.uniform(0, 0.4, 60), 0, 1)
    unlabelled = rng.uniform(0.1, 1.0, 300)
    weights = predictable_weights(y, yhat, unlabelled)
    assert weights[:2].tolist() == [0.0, 0.0]
    for i in range(2, 60):
        assert weights[i] == pytest.approx(power_tuning(y[:i], yhat[:i], unlabelled), abs=1e-12)
    changed = y.copy()
    changed[-1] = 1 - changed[-1]
    assert (predictable_weights(changed, yhat, unlabelled) == weights).all(), "a later label moves no earlier weight"


def test_an_anytime_corrected_interval_weighs_each_label_by_what_came_before_it_and_keeps_the_estimate():
    from evalhub.core.statistics.corrected_win_rates import corrected_win_rate
    from evalhub.core.statistics.sequential import PLANNED_N, corrected_sequence, predictable_weights

    rng = np.random.default_rng(5)
    judge = {f"p{i}": float(np.clip(rng.normal(0.6, 0.25), 0, 1)) for i in range(400)}
    people = {p: float(rng.uniform() < judge[p]) for p in sorted(judge)[:80]}
    row = corrected_win_rate("m", judge, people, anytime=True)
    labelled = sorted(people)
    y, yhat = [people[p] for p in labelled], [judge[p] for p in labelled]
    unlabelled = [judge[p] for p in judge if p not in people]
    weights = predictable_weights(y, yhat, unlabelled)
    expected = corrected_sequence(y, yhat, unlabelled, weights, planned_n=PLANNED_N)
    assert (row.corrected_ci_low, row.corrected_ci_high) == pytest.approx((100 * expected.low, 100 * expected.high))
    fixed = corrected_win_rate("m", judge, people)
    assert (row.corrected_win_rate, row.judge_weight) == pytest.approx((fixed.corrected_win_rate, fixed.judge_weight))
