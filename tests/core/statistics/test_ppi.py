"""Prediction-powered means, checked against ppi-python (the authors' library) and by their properties."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub.core.statistics.corrected_ratings import ELO, CorrectedBoard, corrected_bradley_terry
from evalhub.core.statistics.logistic_ppi import ppi_logistic
from evalhub.core.statistics.ppi import (
    active_mean,
    classical_mean,
    expected_error,
    inclusion_probability,
    labelling_probabilities,
    power_tuning,
    ppi_mean,
)


def judged(seed: int, n: int = 60, big_n: int = 600, noise: float = 0.25):
    """A judge's preference that follows people's with noise: people's labels on n items, the judge's
    on those and on N more."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.2, 0.8, n + big_n)
    people = (rng.uniform(size=n + big_n) < truth).astype(float)
    judge = np.clip(truth + rng.normal(0, noise, n + big_n), 0, 1)
    return people[:n], judge[:n], judge[n:]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_corrected_mean_and_interval_equal_ppi_pythons(seed):
    ppi_py = pytest.importorskip("ppi_py")
    y, yhat, unlabelled = judged(seed)
    ours = ppi_mean(y, yhat, unlabelled, alpha=0.05)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05)
    assert ours.value == pytest.approx(float(ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled)[0]), abs=1e-12)
    assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)
    for lam in (0.0, 0.5, 1.0):  # the same with λ given
        fixed = ppi_mean(y, yhat, unlabelled, lam=lam)
        low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=lam)
        assert (fixed.low, fixed.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)


def test_people_only_equals_ppi_pythons_classical_mean():
    ppi_py = pytest.importorskip("ppi_py")
    y, _, _ = judged(3)
    low, high = ppi_py.classical_mean_ci(y, alpha=0.05)
    ours = classical_mean(y)
    assert (ours.low, ours.high) == pytest.approx((float(low), float(high)), rel=1e-9)


def test_a_perfect_judge_changes_nothing_and_its_interval_is_the_judges():
    rng = np.random.default_rng(4)
    truth = rng.uniform(size=500)
    y, unlabelled = truth[:50], truth[50:]
    estimate = ppi_mean(y, y, unlabelled)
    assert estimate.lam > 0.8, "trusted: λ* = Var(Y) / ((1 + n/N)·Var(Ŷ)), about 0.9 here"
    assert estimate.value == pytest.approx(estimate.lam * unlabelled.mean() + (1 - estimate.lam) * y.mean())
    full = ppi_mean(y, y, unlabelled, lam=1.0)
    assert full.value == pytest.approx(unlabelled.mean()), "the correction of a perfect judge is zero"
    assert full.effective_n > 5 * len(y), "worth many more labels than people gave"


def test_a_judge_that_is_pure_noise_gives_back_the_people_only_estimate():
    rng = np.random.default_rng(5)
    y = (rng.uniform(size=400) < 0.7).astype(float)
    noise = rng.uniform(size=400 + 4000)
    estimate = ppi_mean(y, noise[:400], noise[400:], lam=None)
    people = classical_mean(y)
    # λ* is near 0 (chance covariance only, SD about 0.07 here): people's mean with about people's interval.
    assert estimate.lam < 0.2
    assert estimate.value == pytest.approx(people.value, abs=0.02)
    assert estimate.standard_error == pytest.approx(people.standard_error, rel=0.05)
    assert ppi_mean(y, noise[:400], noise[400:], lam=0.0).value == pytest.approx(people.value)


def test_power_tuning_is_zero_for_a_judge_that_says_the_same_of_everything():
    assert power_tuning(np.array([0.0, 1.0, 1.0]), np.full(3, 0.5), np.full(10, 0.5)) == 0.0


def test_inverse_probability_weighting_keeps_the_active_estimate_unbiased_under_its_selection_rule():
    """Label where the judge is least sure (π ∝ √(p(1−p))): over many draws the mean of the estimates
    is the true mean, while the plain mean of the labelled items alone is biased towards unsure items."""
    rng = np.random.default_rng(6)
    big_n = 2000
    truth = rng.beta(0.6, 0.6, big_n)  # many sure items, some unsure
    judge = np.clip(truth + rng.normal(0.08, 0.1, big_n), 0.001, 0.999)  # biased judge
    chance = labelling_probabilities(np.sqrt(judge * (1 - judge)), budget=200)
    assert chance.sum() == pytest.approx(200, rel=1e-6)
    assert chance.min() >= 0.2 * 200 / big_n and chance.max() <= 1, "at least a fifth of the uniform chance"
    estimates, naive = [], []
    for _ in range(400):
        people = (rng.uniform(size=big_n) < truth).astype(float)
        chosen = rng.uniform(size=big_n) < chance
        estimates.append(active_mean(judge, chosen, people[chosen], chance).value)
        naive.append(people[chosen].mean())
    target = truth.mean()
    spread = np.std(estimates) / np.sqrt(len(estimates))
    assert abs(np.mean(estimates) - target) < 3 * spread, "unbiased"
    assert abs(np.mean(naive) - target) > 3 * spread, "the labelled items alone are not a fair sample"


def test_the_active_estimate_with_uniform_chances_is_ppis_over_every_item():
    rng = np.random.default_rng(16)
    judge = rng.uniform(size=500)
    chosen = np.zeros(500, dtype=bool)
    chosen[rng.choice(500, 60, replace=False)] = True
    people = (rng.uniform(size=60) < judge[chosen]).astype(float)
    estimate = active_mean(judge, chosen, people, np.full(500, 60 / 500), lam=1.0)
    assert estimate.value == pytest.approx(judge.mean() + (people - judge[chosen]).mean())
    assert estimate.n_labelled == 60 and estimate.n_unlabelled == 440


def test_the_active_estimates_power_tuning_makes_a_judge_that_is_pure_noise_worth_people_alone():
    rng = np.random.default_rng(17)
    truth = rng.beta(0.5, 0.5, 3000)
    noise = rng.uniform(size=3000)
    chance = labelling_probabilities(np.ones(3000), budget=300)
    chosen = rng.uniform(size=3000) < chance
    people = (rng.uniform(size=3000) < truth).astype(float)
    tuned = active_mean(noise, chosen, people[chosen], chance)
    plain = active_mean(noise, chosen, people[chosen], chance, lam=1.0)
    weighted_only = active_mean(noise, chosen, people[chosen], chance, lam=0.0)
    # λ does not go to 0 here: λ·Ŷ·(1 − ξ/π) also damps the chance in how many were drawn (a control
    # variate for the weights), so the tuned estimate is at least as tight as either end ...
    assert tuned.standard_error <= min(plain.standard_error, weighted_only.standard_error) + 1e-12
    # ... and close to people's own labels alone (the weights' chance costs a little: here 13 % wider).
    assert tuned.standard_error == pytest.approx(classical_mean(people[chosen]).standard_error, rel=0.2)


def test_the_expected_error_learns_how_far_people_are_from_the_judge_where_it_is_sure_and_unsure():
    rng = np.random.default_rng(18)
    judge = np.repeat([0.0, 0.5, 1.0], 200)  # plain verdicts: a loss, a tie, a win
    # People agree with the judge's wins and losses 90 % of the time; a tie is a coin.
    agree = rng.uniform(size=600) < 0.9
    people = np.where(judge == 0.5, (rng.uniform(size=600) < 0.5).astype(float), np.where(agree, judge, 1 - judge))
    error = expected_error(judge, people, np.array([0.0, 0.5, 1.0]))
    assert error[0] == pytest.approx(np.sqrt(0.1), abs=0.05), "one in ten wins or losses is wrong: E[(Y−Ŷ)²] = 0.1"
    assert error[1] == pytest.approx(0.5, abs=0.05), "a tie is off by ½ whatever people say"
    assert error[0] == error[2]
    # Before ten labels it trusts the judge's own probability.
    assert expected_error(judge[:5], people[:5], np.array([0.5, 0.9])) == pytest.approx([0.5, 0.3])


def test_an_item_is_labelled_beforehand_or_in_any_later_round():
    chance = inclusion_probability(0.1, [[0.5, 0.0], [0.2, 0.0]])
    assert chance == pytest.approx([1 - 0.9 * 0.5 * 0.8, 0.1])


def test_active_labelling_from_what_people_said_so_far_keeps_its_interval_honest():
    """The design the app offers: a uniform few first, then pairs drawn where the learnt error is
    largest, weighted by the chance of being labelled at all; its 95 % interval covers the truth."""
    rng = np.random.default_rng(19)
    hits, runs = 0, 300
    for _ in range(runs):
        truth = rng.beta(0.3, 0.3, 600)
        judge = np.clip(truth + rng.normal(0.05, 0.15, 600), 0, 1)
        people = (rng.uniform(size=600) < truth).astype(float)
        before = np.zeros(600, dtype=bool)
        before[rng.choice(600, 30, replace=False)] = True
        chance = labelling_probabilities(expected_error(judge[before], people[before], judge), budget=70)
        labelled = before | (rng.uniform(size=600) < chance)
        estimate = active_mean(judge, labelled, people[labelled], inclusion_probability(30 / 600, [chance]))
        hits += estimate.low <= truth.mean() <= estimate.high
    assert hits / runs > 0.91, f"coverage {hits / runs:.2f}"


def test_too_few_labels_are_refused_with_their_counts():
    with pytest.raises(ValueError, match="at least 2 labelled items and 1 more, got 1 and 5"):
        ppi_mean([1.0], [1.0], [0.5] * 5)
    with pytest.raises(ValueError, match="2 people's labels but 3 judge labels"):
        ppi_mean([1.0, 0.0], [1.0, 0.0, 1.0], [0.5])


def bradley_terry_battles(seed: int, models: int = 4, battles: int = 900, labelled: int = 150):
    """Battles as Bradley–Terry rows (+1 for the first model, −1 for the second, the last model left out as
    the anchor), people's verdicts on the first `labelled` and a judge's probability on all of them."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(0.8, 0.0, models)
    first = rng.integers(0, models, battles)
    second = (first + rng.integers(1, models, battles)) % models
    x = np.zeros((battles, models))
    x[np.arange(battles), first], x[np.arange(battles), second] = 1, -1
    p = 1 / (1 + np.exp(-(strength[first] - strength[second])))
    people = (rng.uniform(size=battles) < p).astype(float)
    judge = np.clip(p + 0.1 + rng.normal(0, 0.15, battles), 0, 1)  # biased towards the first shown
    x = x[:, :-1]
    return x[:labelled], people[:labelled], judge[:labelled], x[labelled:], judge[labelled:]


@pytest.mark.parametrize("lam", [None, 0.0, 0.5, 1.0])
def test_prediction_powered_bradley_terry_equals_ppi_pythons_logistic_fit(lam):
    ppi_py = pytest.importorskip("ppi_py")
    x, y, yhat, x_u, yhat_u = bradley_terry_battles(7)
    ours = ppi_logistic(x, y, yhat, x_u, yhat_u, lam=lam)
    low, high = ppi_py.ppi_logistic_ci(x, y, yhat, x_u, yhat_u, alpha=0.05, lam=lam)
    if lam is not None:
        theirs = ppi_py.ppi_logistic_pointestimate(x, y, yhat, x_u, yhat_u, lam=lam)
        assert ours.coefficients == pytest.approx(theirs, abs=1e-6)
    # With λ tuned, ppi_logistic_ci tunes it once more at the tuned fit: its interval's centre is ours.
    z = 1.959963984540054
    assert ours.coefficients - z * ours.standard_errors == pytest.approx(low, abs=1e-6)
    assert ours.coefficients + z * ours.standard_errors == pytest.approx(high, abs=1e-6)


def arena(seed: int, battles: int = 3000, labelled: int = 300, favoured_bias: float = 0.15):
    """Four models with known strengths; the judge favours 'verbose' by `favoured_bias` in every battle
    it is in; people's verdicts are coins with the true probability, on the first `labelled` battles."""
    rng = np.random.default_rng(seed)
    names = ["alpha", "beta", "gamma", "verbose"]
    strength = np.array([0.6, 0.2, -0.3, -0.5])
    first = rng.integers(0, 4, battles)
    second = (first + rng.integers(1, 4, battles)) % 4
    p = 1 / (1 + np.exp(-(strength[first] - strength[second])))
    bias = favoured_bias * ((first == 3) * 1.0 - (second == 3) * 1.0)
    judge = np.clip(p + bias + rng.normal(0, 0.1, battles), 0, 1)
    people = np.full(battles, np.nan)
    people[:labelled] = (rng.uniform(size=labelled) < p[:labelled]).astype(float)
    truth = dict(zip(names, 1000 + ELO * (strength - strength.mean()), strict=True))
    return [names[i] for i in first], [names[i] for i in second], judge, people, truth


def test_a_board_from_a_biased_judge_corrected_by_people_covers_the_true_ratings_where_the_judges_does_not():
    first, second, judge, people, truth = arena(8)
    board = corrected_bradley_terry(first, second, judge, people)
    assert isinstance(board, CorrectedBoard)
    assert (board.n_human, board.n_judge) == (300, 3000)
    rating = {r.model: r for r in board.ratings}
    verbose = rating["verbose"]
    assert verbose.judge_low > truth["verbose"], "the judge's own board is sure of the wrong number"
    assert verbose.corrected_low <= truth["verbose"] <= verbose.corrected_high
    for model, r in rating.items():
        assert r.corrected_low <= truth[model] <= r.corrected_high, model
        assert r.people_low <= truth[model] <= r.people_high, model
        # λ is tuned for the total variance over all ratings, so one rating's interval may be a little wider.
        assert r.corrected_high - r.corrected_low <= 1.05 * (r.people_high - r.people_low), model
    assert sum(r.judge for r in board.ratings) == pytest.approx(4000), "centred on 1000"


def test_a_perfect_judge_gives_the_corrected_board_its_own_ratings():
    first, second, judge, people, _ = arena(9, favoured_bias=0.0)
    labelled = ~np.isnan(people)
    people[labelled] = judge[labelled]  # people say exactly what the judge says
    board = corrected_bradley_terry(first, second, judge, people)
    assert isinstance(board, CorrectedBoard)
    for r in board.ratings:
        assert r.corrected == pytest.approx(r.judge, abs=2.0)


def test_too_few_labels_or_an_unlabelled_model_give_a_reason_not_a_board():
    first, second, judge, people, _ = arena(10, labelled=5)
    assert "5 battles people labelled: too few" in corrected_bradley_terry(first, second, judge, people)
    first, second, judge, people, _ = arena(10)
    people[[i for i, (a, b) in enumerate(zip(first, second, strict=True)) if "gamma" in (a, b)]] = np.nan
    assert "some model is in no battle people labelled" in corrected_bradley_terry(first, second, judge, people)


def test_a_model_people_labelled_every_battle_of_is_corrected_too():
    """The first fit (the judge weighted 1) reads the curvature of the battles people did not label
    only: a model in none of them has no optimum there, and the board said the battles did not connect
    every model. PPI++ tunes the weight from people's own fit instead, and the board is drawn."""
    first, second, judge, people, truth = arena(12)
    with_gamma = np.array(["gamma" in pair for pair in zip(first, second, strict=True)])
    people[with_gamma] = (np.random.default_rng(12).uniform(size=with_gamma.sum()) < judge[with_gamma]).astype(float)
    keep = with_gamma | ~np.isnan(people) | (np.arange(len(people)) % 2 == 0)
    first, second = (
        [m for m, k in zip(first, keep, strict=True) if k],
        [m for m, k in zip(second, keep, strict=True) if k],
    )
    board = corrected_bradley_terry(first, second, judge[keep], people[keep])
    assert isinstance(board, CorrectedBoard), board
    assert 0 <= board.judge_weight < 1
    gamma = next(r for r in board.ratings if r.model == "gamma")
    assert gamma.corrected_low <= truth["gamma"] <= gamma.corrected_high


def test_the_labels_needed_for_a_target_width_give_that_width_when_people_label_that_many():
    y, yhat, unlabelled = judged(11, n=60, big_n=3000, noise=0.1)
    now = ppi_mean(y, yhat, unlabelled, lam=0.8)
    target = (now.high - now.low) / 2 / 2  # half today's half-width
    needed = now.labels_for(target)
    assert needed is not None and needed > 60
    # With that many labels of the same spread, the interval is the target (at this λ and N).
    z = 1.959963984540054
    assert z * np.sqrt(now.label_variance / needed + now.judge_term) <= target + 1e-12
    assert z * np.sqrt(now.label_variance / (needed - 1) + now.judge_term) > target
    assert now.labels_for(z * np.sqrt(now.judge_term) * 0.9) is None, "narrower than the judge's own: unreachable"
    assert now.scaled(100).labels_for(100 * target) == needed, "the same in percent"
