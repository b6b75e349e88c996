"""Cluster-robust prediction-powered Bradley–Terry: battles on one prompt are not independent."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub.core.statistics.corrected_ratings import CorrectedBoard, corrected_bradley_terry
from evalhub.core.statistics.logistic_ppi import _expit, ppi_logistic

sm = pytest.importorskip("statsmodels.api")


def clustered_arena(seed: int, prompts: int = 120, per_prompt: int = 6, models: int = 4, spread: float = 1.0):
    """Battles on `prompts` prompts, `per_prompt` each. On each prompt every model is better or worse
    than its strength by its own draw (SD `spread`): the battles of one prompt share those draws. People
    label the first third of the prompts' battles; the judge sees each battle's probability with noise
    and a bias towards model 0."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(0.6, -0.6, models)
    prompt = np.repeat(np.arange(prompts), per_prompt)
    on_prompt = rng.normal(0, spread, (prompts, models))
    first = rng.integers(0, models, len(prompt))
    second = (first + rng.integers(1, models, len(prompt))) % models
    logit = strength[first] - strength[second] + on_prompt[prompt, first] - on_prompt[prompt, second]
    p = _expit(logit)
    people = (rng.uniform(size=len(p)) < p).astype(float)
    judge = np.clip(p + 0.1 * ((first == 0) * 1.0 - (second == 0)) + rng.normal(0, 0.1, len(p)), 0, 1)
    x = np.zeros((len(p), models))
    x[np.arange(len(p)), first], x[np.arange(len(p)), second] = 1, -1
    labelled = prompt < prompts // 3
    return x[:, :-1], people, judge, prompt, labelled, first, second


def statsmodels_cluster_fit(x, y, groups):
    with np.errstate(all="ignore"):
        return sm.GLM(y, x, family=sm.families.Binomial()).fit(cov_type="cluster", cov_kwds={"groups": groups})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_peoples_clustered_fit_equals_statsmodels_cluster_robust_glm(seed):
    x, people, judge, prompt, labelled, *_ = clustered_arena(seed)
    ours = ppi_logistic(
        x[labelled],
        people[labelled],
        judge[labelled],
        x[~labelled],
        judge[~labelled],
        0.0,
        prompt[labelled],
        prompt[~labelled],
    )
    theirs = statsmodels_cluster_fit(x[labelled], people[labelled], prompt[labelled])
    assert np.abs(ours.coefficients - theirs.params).max() < 1e-9
    assert np.abs(ours.covariance - theirs.cov_params()).max() < 1e-9
    assert np.abs(ours.standard_errors - theirs.bse).max() < 1e-9


def test_the_judges_own_clustered_board_equals_statsmodels_on_its_probabilities():
    x, _, judge, prompt, *_ = clustered_arena(3)
    ours = ppi_logistic(x, judge, judge, x[:1], judge[:1], 0.0, prompt, prompt[:1])
    theirs = statsmodels_cluster_fit(x, judge, prompt)
    assert np.abs(ours.coefficients - theirs.params).max() < 1e-9
    assert np.abs(ours.covariance - theirs.cov_params()).max() < 1e-9


def written_out_covariance(x, y, yhat, x_u, yhat_u, lam, clusters, clusters_u, theta):
    """The clustered sandwich from its definition, a row at a time: H the mean Hessian of the loss over
    every row; per cluster the sum of the centred rectified gradients (people's minus λ the judge's, over
    n, on labelled rows; λ the judge's over N on the others); the factor G/(G−1)·(m−1)/(m−d)."""
    n, big_n, d = len(y), len(yhat_u), x.shape[1]
    rows = np.vstack([x, x_u])
    mu = 1 / (1 + np.exp(-rows @ theta))
    hessian = sum(m * (1 - m) * np.outer(r, r) for r, m in zip(rows, mu, strict=True)) / (n + big_n)
    labelled_terms = [
        r * (1 / (1 + np.exp(-r @ theta)) - a) - lam * r * (1 / (1 + np.exp(-r @ theta)) - b)
        for r, a, b in zip(x, y, yhat, strict=True)
    ]
    judge_terms = [lam * r * (1 / (1 + np.exp(-r @ theta)) - b) for r, b in zip(x_u, yhat_u, strict=True)]
    mean_l, mean_u = np.mean(labelled_terms, axis=0), np.mean(judge_terms, axis=0)
    sums: dict = {}
    for term, cluster in zip(labelled_terms, clusters, strict=True):
        sums[cluster] = sums.get(cluster, np.zeros(d)) + (term - mean_l) / n
    for term, cluster in zip(judge_terms, clusters_u, strict=True):
        sums[cluster] = sums.get(cluster, np.zeros(d)) + (term - mean_u) / big_n
    groups, m = len(sums), n + big_n
    middle = sum(np.outer(s, s) for s in sums.values()) * groups / (groups - 1) * (m - 1) / (m - d)
    inverse = np.linalg.inv(hessian)
    return inverse @ middle @ inverse


@pytest.mark.parametrize("lam", [0.4, 1.0, None])
def test_the_corrected_clustered_covariance_equals_its_definition_written_out(lam):
    x, people, judge, prompt, labelled, *_ = clustered_arena(4, prompts=60)
    # A prompt with labelled and unlabelled battles: their dependence enters the same cluster's sum.
    labelled = labelled | ((prompt % 7 == 0) & (np.arange(len(prompt)) % 2 == 0))
    args = (x[labelled], people[labelled], judge[labelled], x[~labelled], judge[~labelled])
    ours = ppi_logistic(*args, lam, prompt[labelled], prompt[~labelled])
    expected = written_out_covariance(*args, ours.lam, prompt[labelled], prompt[~labelled], ours.coefficients)
    assert np.abs(ours.covariance - expected).max() < 1e-12
    unclustered = ppi_logistic(*args, lam)
    assert ours.lam == unclustered.lam and np.allclose(ours.coefficients, unclustered.coefficients, atol=1e-12)


def test_a_board_of_battles_that_share_prompts_widens_its_intervals_when_told_their_prompts():
    x, people, judge, prompt, labelled, first, second = clustered_arena(5, prompts=300, per_prompt=12, spread=1.5)
    names = np.array(["a", "b", "c", "d"])
    shares = np.where(labelled, people, np.nan)
    plain = corrected_bradley_terry(names[first], names[second], judge, shares)
    clustered = corrected_bradley_terry(names[first], names[second], judge, shares, clusters=prompt)
    assert isinstance(plain, CorrectedBoard) and isinstance(clustered, CorrectedBoard)
    by_model = {r.model: r for r in plain.ratings}
    for r in clustered.ratings:
        independent = by_model[r.model]
        assert r.corrected == pytest.approx(independent.corrected, abs=1e-9), "the fit is the same"
        for low, high, low_0, high_0 in (
            (r.corrected_low, r.corrected_high, independent.corrected_low, independent.corrected_high),
            (r.people_low, r.people_high, independent.people_low, independent.people_high),
            (r.judge_low, r.judge_high, independent.judge_low, independent.judge_high),
        ):
            assert high - low > 1.1 * (high_0 - low_0), r.model


@pytest.mark.parametrize("with_prompts", [True, False])
def test_identical_battles_fitted_once_with_their_count_give_the_board_of_every_battle(with_prompts):
    """A judge of plain verdicts has few kinds of battle: the board fits each kind once, with its count
    (and its count per prompt), and must equal the fit with one row per battle."""
    from evalhub.core.statistics.corrected_ratings import _centred

    x, people, judge, prompt, labelled, first, second = clustered_arena(6, prompts=150, per_prompt=8)
    verdicts = np.round(judge * 2) / 2  # 0, ½ or 1: many battles alike
    names = np.array(["a", "b", "c", "d"])
    shares = np.where(labelled, people, np.nan)
    board = corrected_bradley_terry(
        names[first], names[second], verdicts, shares, clusters=prompt if with_prompts else None
    )
    assert isinstance(board, CorrectedBoard)
    c, c_u = (prompt[labelled], prompt[~labelled]) if with_prompts else (None, None)
    args = (x[labelled], people[labelled], verdicts[labelled], x[~labelled], verdicts[~labelled])
    corrected = ppi_logistic(*args, None, c, c_u)
    alone = ppi_logistic(*args, 0.0, c, c_u)
    judge_only = ppi_logistic(
        x, verdicts, verdicts, x[~labelled], verdicts[~labelled], 0.0, prompt if with_prompts else None, c_u
    )
    assert board.judge_weight == pytest.approx(corrected.lam, abs=1e-12)
    expected = [_centred(estimate, 4, 0.05) for estimate in (judge_only, corrected, alone)]
    for i, name in enumerate(names):
        rating = next(r for r in board.ratings if r.model == name)
        got = [
            rating.judge,
            rating.judge_low,
            rating.judge_high,
            rating.corrected,
            rating.corrected_low,
            rating.corrected_high,
            rating.people,
            rating.people_low,
            rating.people_high,
        ]
        want = [float(part[i]) for estimate in expected for part in estimate]
        assert got == pytest.approx(want, abs=1e-8), name
