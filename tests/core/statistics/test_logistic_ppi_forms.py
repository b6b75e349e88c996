"""Stratified and several-judge forms of prediction-powered Bradley–Terry, checked against the same
estimators written out here from their definitions (a rectified loss minimised by scipy, a sandwich
summed a row at a time, weights found by minimising the variance numerically)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from evalhub.core.statistics.corrected_ratings import CorrectedBoard, corrected_bradley_terry
from evalhub.core.statistics.estimators import AUTO, CLASSICAL, MULTI_JUDGE, PPI, STRATIFIED
from evalhub.core.statistics.logistic_ppi import _Battles, _expit, _rectified_fit, _tuned_weights, ppi_logistic

MODELS = 4
STRENGTH = np.linspace(0.6, -0.6, MODELS)


def battles(seed: int, n_battles: int = 3000, labelled: int = 400, judges: int = 1, sharp_share: float = 0.5):
    """Battles on two categories, each with its outcome (a coin with the Bradley–Terry probability);
    people give the outcome on the first `labelled`. On 'code' the first judge gives the outcome 95 % of
    the time; on 'chat' it guesses. Extra judges give the outcome 75 % of the time, independently."""
    rng = np.random.default_rng(seed)
    first = rng.integers(0, MODELS, n_battles)
    second = (first + rng.integers(1, MODELS, n_battles)) % MODELS
    outcome = (rng.uniform(size=n_battles) < _expit(STRENGTH[first] - STRENGTH[second])).astype(float)
    category = np.where(rng.uniform(size=n_battles) < sharp_share, "code", "chat")
    right = rng.uniform(size=n_battles) < np.where(category == "code", 0.95, 0.5)
    shares = [np.where(right, outcome, 1 - outcome)]
    shares += [np.where(rng.uniform(size=n_battles) < 0.75, outcome, 1 - outcome) for _ in range(judges - 1)]
    people = np.full(n_battles, np.nan)
    people[:labelled] = outcome[:labelled]
    x = np.zeros((n_battles, MODELS))
    x[np.arange(n_battles), first], x[np.arange(n_battles), second] = 1, -1
    return x[:, :-1], people, np.column_stack(shares), category, first, second


def loss(theta, x, label):
    z = x @ theta
    return np.logaddexp(0, z) - label * z


def split(x, people, shares, category):
    known = ~np.isnan(people)
    return x[known], people[known], shares[known], x[~known], shares[~known], category[known], category[~known]


def test_the_stratified_fit_and_sandwich_equal_their_definitions_with_a_weight_per_stratum():
    x, y, yhat, x_u, yhat_u, s, s_u = split(*battles(1)[:4])
    yhat, yhat_u = yhat[:, 0], yhat_u[:, 0]
    lam = {"chat": 0.2, "code": 0.9}
    ours = ppi_logistic(
        x, y, yhat, x_u, yhat_u, np.array([[lam["chat"]], [lam["code"]]]), strata=s, strata_unlabelled=s_u
    )
    total = len(y) + len(yhat_u)

    def rectified(theta):
        out = 0.0
        for k, weight in lam.items():
            a, b = s == k, s_u == k
            share = (a.sum() + b.sum()) / total
            out += share * (
                (loss(theta, x[a], y[a]) - weight * loss(theta, x[a], yhat[a])).mean()
                + weight * loss(theta, x_u[b], yhat_u[b]).mean()
            )
        return out

    found = minimize(rectified, np.zeros(x.shape[1]), method="BFGS", options={"gtol": 1e-10})
    assert np.abs(ours.coefficients - found.x).max() < 1e-5
    theta = ours.coefficients
    rows = np.vstack([x, x_u])
    mu_all = _expit(rows @ theta)
    hessian = (rows.T * (mu_all * (1 - mu_all))) @ rows / total
    middle = np.zeros((x.shape[1],) * 2)
    for k, weight in lam.items():
        a, b = s == k, s_u == k
        share = (a.sum() + b.sum()) / total
        mu, mu_u = _expit(x[a] @ theta), _expit(x_u[b] @ theta)
        people = x[a] * (mu - y[a])[:, None] - weight * x[a] * (mu - yhat[a])[:, None]
        judge = weight * x_u[b] * (mu_u - yhat_u[b])[:, None]
        middle += share**2 * (np.cov(people.T) / a.sum() + np.cov(judge.T) / b.sum())
    inverse = np.linalg.inv(hessian)
    assert np.abs(ours.covariance - inverse @ middle @ inverse).max() < 1e-12
    assert np.isnan(ours.lam) and ours.weights.tolist() == [[0.2], [0.9]]


def test_one_stratum_is_plain_ppi_plus_plus():
    x, y, yhat, x_u, yhat_u, s, s_u = split(*battles(2)[:4])
    plain = ppi_logistic(x, y, yhat[:, 0], x_u, yhat_u[:, 0])
    one = ppi_logistic(
        x, y, yhat[:, 0], x_u, yhat_u[:, 0], strata=np.full(len(y), "all"), strata_unlabelled=np.full(len(x_u), "all")
    )
    assert np.abs(plain.coefficients - one.coefficients).max() < 1e-12
    assert np.abs(plain.covariance - one.covariance).max() < 1e-12


def variance_trace(x, y, yhat, x_u, yhat_u, theta, lam):
    """tr(H⁻¹[Cov(∇ℓ − Σλ∇ℓ̂)/n + Cov(Σλ∇ℓ̂')/N]H⁻¹) with the judges' spread pooled over every row, as
    PPI++ tunes: written with d × d covariance matrices, one judge at a time."""
    n, big_n = len(y), len(x_u)
    rows = np.vstack([x, x_u])
    mu_all = _expit(rows @ theta)
    inverse = np.linalg.inv((rows.T * (mu_all * (1 - mu_all))) @ rows / (n + big_n))
    mu = _expit(x @ theta)
    people = x * (mu - y)[:, None]
    judge = [
        np.vstack([x * (mu - yhat[:, j])[:, None], x_u * (_expit(x_u @ theta) - yhat_u[:, j])[:, None]])
        for j in range(yhat.shape[1])
    ]
    labelled_judge = [g[:n] for g in judge]
    total = np.cov(people.T) * (n - 1) / n / n
    for j, weight in enumerate(lam):
        cross = (people - people.mean(0)).T @ (labelled_judge[j] - labelled_judge[j].mean(0)) / n
        total -= weight * (cross + cross.T) / n
        for k, other in enumerate(lam):
            spread = (judge[j] - judge[j].mean(0)).T @ (judge[k] - judge[k].mean(0)) / (n + big_n - 1)
            total += weight * other * spread * (1 / n + 1 / big_n)
    return float(np.trace(inverse @ total @ inverse))


def test_several_judges_weights_minimise_the_variance_and_the_fit_equals_the_loss_of_every_judge():
    x, people, shares, category, *_ = battles(3, judges=3)
    x, y, yhat, x_u, yhat_u, *_ = split(x, people, shares, category)
    known = {"x": x, "y": y, "yhat": yhat, "x_u": x_u, "yhat_u": yhat_u}
    strata = (np.zeros(len(y), dtype=int), np.zeros(len(x_u), dtype=int))
    data = _Battles(x, y, yhat, np.ones(len(y)), strata[0], x_u, yhat_u, np.ones(len(x_u)), strata[1], 1)
    theta = _rectified_fit(data, np.full((1, 3), 1 / 3))
    weights = _tuned_weights(data, theta, single=False)[0]
    best = minimize(
        lambda lam: variance_trace(**known, theta=theta, lam=lam),
        np.full(3, 0.3),
        method="Nelder-Mead",
        options={"xatol": 1e-9, "fatol": 1e-14, "maxiter": 5000},
    )
    assert np.abs(weights - best.x).max() < 1e-3, (weights, best.x)
    assert 0 < weights.sum() <= 1

    ours = ppi_logistic(x, y, yhat, x_u, yhat_u)
    lam = ours.weights[0]

    def rectified(th):
        out = loss(th, x, y).mean()
        for j, weight in enumerate(lam):
            out += weight * (loss(th, x_u, yhat_u[:, j]).mean() - loss(th, x, yhat[:, j]).mean())
        return out

    found = minimize(rectified, np.zeros(x.shape[1]), method="BFGS", options={"gtol": 1e-10})
    assert np.abs(ours.coefficients - found.x).max() < 1e-5
    th = ours.coefficients
    mu, mu_u = _expit(x @ th), _expit(x_u @ th)
    rows = np.vstack([x, x_u])
    mu_all = _expit(rows @ th)
    inverse = np.linalg.inv((rows.T * (mu_all * (1 - mu_all))) @ rows / len(rows))
    people_terms = x * (mu - y)[:, None] - sum(w * x * (mu - yhat[:, j])[:, None] for j, w in enumerate(lam))
    judge_terms = sum(w * x_u * (mu_u - yhat_u[:, j])[:, None] for j, w in enumerate(lam))
    middle = np.cov(people_terms.T) / len(y) + np.cov(judge_terms.T) / len(x_u)
    assert np.abs(ours.covariance - inverse @ middle @ inverse).max() < 1e-12


def test_one_judge_among_several_columns_is_plain_ppi_plus_plus():
    x, y, yhat, x_u, yhat_u, *_ = split(*battles(4)[:4])
    plain = ppi_logistic(x, y, yhat[:, 0], x_u, yhat_u[:, 0])
    column = ppi_logistic(x, y, yhat[:, :1], x_u, yhat_u[:, :1])
    assert 0 < plain.lam < 1, "a case where neither clip nor scaling acts"
    assert abs(column.weights[0, 0] - plain.lam) < 1e-12
    assert np.abs(plain.coefficients - column.coefficients).max() < 1e-9


def board(seed, asked=AUTO, judges=1, sharp_share=0.5, with_categories=True):
    x, people, shares, category, first, second = battles(seed, judges=judges, sharp_share=sharp_share)
    names = np.array([f"m{i}" for i in range(MODELS)])
    return corrected_bradley_terry(
        names[first],
        names[second],
        shares[:, 0],
        people,
        clusters=np.arange(len(people)) // 3,
        categories=category if with_categories else None,
        others=shares[:, 1:] if judges > 1 else None,
        asked=asked,
    )


def widths(found: CorrectedBoard) -> float:
    return float(np.mean([r.corrected_high - r.corrected_low for r in found.ratings]))


def test_a_judge_sharp_on_one_category_and_guessing_on_another_is_stratified_and_narrower():
    auto, plain = board(5), board(5, asked=PPI)
    assert isinstance(auto, CorrectedBoard) and isinstance(plain, CorrectedBoard)
    assert auto.estimator == STRATIFIED and auto.strata == 2, auto.estimator_reason
    assert "stratified by category (2 strata): the judge's error differs across them" in auto.estimator_reason
    assert plain.estimator == PPI and np.isnan(auto.judge_weight)
    assert widths(auto) < widths(plain)


def test_several_judges_only_when_asked_and_only_with_judges_that_judged_every_battle():
    several = board(6, asked=MULTI_JUDGE, judges=3)
    assert isinstance(several, CorrectedBoard)
    assert several.estimator == MULTI_JUDGE and several.judges == 3, several.estimator_reason
    alone = board(6, asked=PPI, judges=3)
    assert widths(several) < widths(alone)
    fallback = board(6, asked=MULTI_JUDGE, judges=1, with_categories=False)
    assert fallback.estimator == PPI
    assert fallback.estimator_reason == "several judges: no other judge judged every one of these pairs; PPI++ instead"


def test_people_alone_as_asked_is_the_people_column():
    found = board(7, asked=CLASSICAL)
    assert found.estimator == CLASSICAL and found.judge_weight == 0.0
    for rating in found.ratings:
        assert rating.corrected == pytest.approx(rating.people, abs=1e-9)
        assert rating.corrected_low == pytest.approx(rating.people_low, abs=1e-9)


def test_stratified_asked_without_categories_of_a_judge_of_plain_verdicts_says_why_it_cannot_be():
    """Without categories the strata are bins of the judge's confidence; plain verdicts all sit in one."""
    found = board(8, asked=STRATIFIED, with_categories=False)
    assert found.estimator == PPI
    assert found.estimator_reason == "stratified: fewer than 2 strata with 10 labels each; PPI++ instead"


def test_a_board_of_many_models_is_fitted_on_a_sparse_design_with_the_dense_designs_numbers(monkeypatch):
    """Thirty models: the design is read sparse (two non-zeros a row), and every figure equals the dense
    fit's; what is tested is that nothing but the speed changes."""
    from evalhub.core.statistics import logistic_ppi
    from evalhub.core.statistics.corrected_ratings import corrected_bradley_terry

    rng = np.random.default_rng(7)
    models, count = 30, 3000
    first = rng.integers(0, models, count)
    second = (first + rng.integers(1, models, count)) % models
    truth = rng.random(count) < 1 / (1 + np.exp(rng.normal(0, 1, models)[second] - rng.normal(0, 1, models)[first]))
    judge = np.where(rng.random(count) < 0.8, truth, ~truth).astype(float)
    people = np.where(rng.random(count) < 0.2, truth.astype(float), np.nan)
    names = np.array([f"m{i:02d}" for i in range(models)], dtype=object)
    clusters = rng.integers(0, 800, count)
    thin, used = logistic_ppi._sparse_if_thin, []
    monkeypatch.setattr(logistic_ppi, "_sparse_if_thin", lambda x: used.append(thin(x)) or used[-1])
    sparse = corrected_bradley_terry(names[first], names[second], judge, people, clusters=clusters)
    assert any(found is not None for found in used), "the design was read sparse"
    monkeypatch.setattr(logistic_ppi, "_sparse_if_thin", lambda x: None)
    dense = corrected_bradley_terry(names[first], names[second], judge, people, clusters=clusters)
    assert not isinstance(sparse, str) and not isinstance(dense, str)
    for a, b in zip(sparse.ratings, dense.ratings, strict=True):
        assert (a.model, a.corrected, a.corrected_low, a.corrected_high) == pytest.approx(
            (b.model, b.corrected, b.corrected_low, b.corrected_high), abs=1e-8
        )
    assert sparse.judge_weight == pytest.approx(dense.judge_weight, abs=1e-12)
