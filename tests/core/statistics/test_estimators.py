"""The corrected-mean estimators against their references and written-out formulas, and the rule that
chooses among them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize

from evalhub.core.statistics.estimators import (
    AUTO,
    CLASSICAL,
    MULTI_JUDGE,
    PPI,
    STRATIFIED,
    choose,
    confidence_strata,
    error_differs_by_stratum,
    multi_judge_ppi_mean,
    strata_of,
    stratified_ppi_mean,
)
from evalhub.core.statistics.ppi import ppi_mean

Z = 1.959963984540054


def categories_case(seed: int, labelled: int = 300, unlabelled: int = 3000, good_share: float = 0.5):
    """Two categories: on "easy" the judge says what people would (its probability, slightly noisy), on
    "hard" it guesses. People's label is a coin with the pair's true chance."""
    rng = np.random.default_rng(seed)
    total = labelled + unlabelled
    category = np.where(rng.uniform(size=total) < good_share, "easy", "hard")
    p = rng.beta(0.6, 0.6, total)
    y = (rng.uniform(size=total) < p).astype(float)
    judge = np.where(category == "easy", np.clip(p + rng.normal(0, 0.03, total), 0, 1), rng.uniform(size=total))
    return y[:labelled], judge[:labelled], category[:labelled], judge[labelled:], category[labelled:]


def test_stratified_ppi_is_ppi_pythons_estimate_in_each_stratum_weighted_by_its_share():
    ppi_py = pytest.importorskip("ppi_py")
    y, yhat, strata, yhat_u, strata_u = categories_case(0)
    ours = stratified_ppi_mean(y, yhat, strata, yhat_u, strata_u)
    value = variance = 0.0
    for stratum in ("easy", "hard"):
        mine, mine_u = strata == stratum, strata_u == stratum
        point = float(ppi_py.ppi_mean_pointestimate(y[mine], yhat[mine], yhat_u[mine_u])[0])
        low, high = ppi_py.ppi_mean_ci(y[mine], yhat[mine], yhat_u[mine_u], alpha=0.05)
        share = (mine.sum() + mine_u.sum()) / (len(y) + len(yhat_u))
        value += share * point
        variance += share**2 * ((float(high[0]) - float(low[0])) / (2 * Z)) ** 2
    assert ours.value == pytest.approx(value, abs=1e-12)
    assert ours.standard_error == pytest.approx(np.sqrt(variance), abs=1e-12)


def test_one_stratum_is_plain_ppi():
    y, yhat, _, yhat_u, _ = categories_case(1)
    one = stratified_ppi_mean(y, yhat, ["all"] * len(y), yhat_u, ["all"] * len(yhat_u))
    plain = ppi_mean(y, yhat, yhat_u)
    assert (one.value, one.standard_error) == pytest.approx((plain.value, plain.standard_error), abs=1e-12)


def test_small_categories_are_pooled_so_every_stratum_rests_on_enough_labels():
    labelled = ["a"] * 12 + ["b"] * 3 + ["c"] * 11
    unlabelled = ["a", "b", "d"]
    assert strata_of(labelled, unlabelled) == (["a"] * 12 + [""] * 14, ["a", "", ""])


def test_one_judge_among_several_is_ppi_plus_plus_before_clipping():
    y, yhat, _, yhat_u, _ = categories_case(2)
    single = multi_judge_ppi_mean(y, yhat[:, None], yhat_u[:, None])
    plain = ppi_mean(y, yhat, yhat_u)
    assert 0 < plain.lam < 1, "the case needs an unclipped weight"
    assert single.lam == pytest.approx(plain.lam, abs=1e-12)
    assert (single.value, single.standard_error) == pytest.approx((plain.value, plain.standard_error), abs=1e-12)


def two_judges(seed: int, labelled: int = 200, unlabelled: int = 4000):
    """Two judges whose errors are independent: each alone is noisy, together they say more."""
    rng = np.random.default_rng(seed)
    total = labelled + unlabelled
    p = rng.beta(0.6, 0.6, total)
    y = (rng.uniform(size=total) < p).astype(float)
    judges = np.column_stack([np.clip(p + rng.normal(0, 0.35, total), 0, 1) for _ in range(2)])
    return y[:labelled], judges[:labelled], judges[labelled:], p.mean()


def test_several_judges_estimate_and_standard_error_follow_their_formula_and_weights_minimise_it():
    y, yhat, yhat_u, _ = two_judges(3)
    ours = multi_judge_ppi_mean(y, yhat, yhat_u)
    n, big_n = len(y), len(yhat_u)

    def written_out(lam: np.ndarray) -> tuple[float, float]:
        residual = y - yhat @ lam
        value = residual.mean() + (yhat_u @ lam).mean()
        # A degree of freedom for the mean and for each of the two weights tuned on the labels.
        return value, np.sqrt(residual.var(ddof=3) / n + (yhat_u @ lam).var() / big_n)

    weights = np.linalg.solve(
        (1 + n / big_n) * np.cov(np.vstack([yhat, yhat_u]).T), ((yhat - yhat.mean(0)) * (y - y.mean())[:, None]).mean(0)
    )
    value, se = written_out(weights)
    assert (ours.value, ours.standard_error) == pytest.approx((value, se), abs=1e-12)
    half = stats.t.ppf(0.975, n - 3) * se
    assert (ours.low, ours.high) == pytest.approx((value - half, value + half), abs=1e-12)
    best = minimize(lambda lam: written_out(lam)[1], x0=np.zeros(2)).fun
    assert se <= 1.01 * best, "the weights are (nearly) the variance-minimising ones"


def test_two_judges_with_independent_errors_beat_the_better_one_alone():
    y, yhat, yhat_u, _ = two_judges(4)
    both = multi_judge_ppi_mean(y, yhat, yhat_u)
    alone = [ppi_mean(y, yhat[:, j], yhat_u[:, j]) for j in range(2)]
    assert both.standard_error < 0.95 * min(a.standard_error for a in alone)


def test_the_rule_chooses_several_judges_then_strata_where_the_judges_error_differs_then_ppi():
    y, yhat, strata, yhat_u, strata_u = categories_case(5)
    rng = np.random.default_rng(5)
    other, other_u = rng.uniform(size=len(y))[:, None], rng.uniform(size=len(yhat_u))[:, None]
    assert error_differs_by_stratum(y, yhat, strata) < 1e-6
    kinds = {"strata": strata, "strata_unlabelled": strata_u}
    chosen = choose(y, yhat, yhat_u, **kinds, others=other, others_unlabelled=other_u)
    assert chosen.estimator == MULTI_JUDGE and "2 judges judged every one" in chosen.reason
    missing = other_u.copy()
    missing[0] = np.nan  # one pair the other judge did not judge: not every one of the same pairs
    chosen = choose(y, yhat, yhat_u, **kinds, others=other, others_unlabelled=missing)
    assert (
        chosen.estimator == STRATIFIED
        and "stratified by category (2 strata): the judge's error differs across them, p = " in chosen.reason
    )
    same = choose(y, yhat, yhat_u, strata=["x"] * len(y), strata_unlabelled=["x"] * len(yhat_u))
    assert same.estimator == PPI and same.estimate == ppi_mean(y, yhat, yhat_u)
    assert choose(y, yhat, yhat_u, asked=CLASSICAL).estimator == CLASSICAL
    asked = choose(y, yhat, yhat_u, asked=MULTI_JUDGE)
    assert asked.estimator == PPI and "no other judge judged every one" in asked.reason


def test_a_judge_equally_good_everywhere_is_not_stratified_unless_asked():
    rng = np.random.default_rng(6)
    p = rng.beta(0.6, 0.6, 3300)
    y = (rng.uniform(size=3300) < p).astype(float)
    judge = np.clip(p + rng.normal(0, 0.2, 3300), 0, 1)
    strata = rng.choice(["a", "b", "c"], 3300)
    args = (y[:300], judge[:300], judge[300:])
    auto = choose(*args, strata=strata[:300], strata_unlabelled=strata[300:], asked=AUTO)
    assert auto.estimator == PPI
    asked = choose(*args, strata=strata[:300], strata_unlabelled=strata[300:], asked=STRATIFIED)
    assert asked.estimator == STRATIFIED and "as asked" in asked.reason


def test_asked_for_strata_where_prompts_have_no_category_the_judges_confidence_bins_serve():
    y, yhat, _, yhat_u, _ = categories_case(7)
    auto = choose(y, yhat, yhat_u)
    assert auto.estimator == PPI, "no categories: no strata unless asked"
    asked = choose(y, yhat, yhat_u, asked=STRATIFIED)
    assert asked.estimator == STRATIFIED and "stratified by the judge's confidence" in asked.reason
    pooled, pooled_u = strata_of(confidence_strata(yhat), confidence_strata(yhat_u))
    by_hand = stratified_ppi_mean(y, yhat, pooled, yhat_u, pooled_u)
    assert (asked.estimate.value, asked.estimate.standard_error) == (by_hand.value, by_hand.standard_error)
    assert confidence_strata([0.5, 0.6, 0.7, 0.9, 0.1, 0.84]) == [
        "close call",
        "close call",
        "leaning",
        "sure",
        "sure",
        "leaning",
    ]


def test_the_ceiling_is_that_of_the_predictors_the_correction_uses():
    sm = pytest.importorskip("statsmodels.api")
    from evalhub.core.statistics.estimators import label_ceiling

    y, yhat, yhat_u, _ = two_judges(8)
    both = choose(y, yhat[:, 0], yhat_u[:, 0], others=yhat[:, 1:], others_unlabelled=yhat_u[:, 1:])
    assert both.estimator == MULTI_JUDGE
    r2 = sm.OLS(y, sm.add_constant(yhat)).fit().rsquared
    assert label_ceiling(y, both.predictors) == pytest.approx(1 / (1 - r2), rel=1e-12)
    alone = label_ceiling(y, yhat[:, 0])
    assert alone == pytest.approx(1 / (1 - np.corrcoef(y, yhat[:, 0])[0, 1] ** 2), rel=1e-12)
    # Two judges are worth more than one can be: a ceiling of one judge would understate what they give.
    assert both.estimate.effective_n > len(y) * alone
    assert both.estimate.effective_n <= len(y) * label_ceiling(y, both.predictors)


def test_a_stratified_ceiling_clips_each_strata_weight_as_the_estimator_does():
    """In one stratum the judge is wrong the other way round (negatively correlated with people): a
    least-squares fit per stratum would weigh it negatively and promise labels stratified PPI++ can never
    give, since it clips each λ to [0, 1]. The ceiling is the clipped fit's: the judge is worth nothing
    there, and an estimate close to it can say "near its ceiling"."""
    from evalhub.core.statistics.estimators import clipped_ceiling, label_ceiling
    from evalhub.core.statistics.ppi_extended import stratified_ppi_mean

    rng = np.random.default_rng(11)
    n, big_n = 300, 3000
    truth = rng.uniform(0.1, 0.9, n + big_n)
    yhat_all = np.clip(np.where(np.arange(n + big_n) % 2 == 0, truth, 1 - truth) + rng.normal(0, 0.05, n + big_n), 0, 1)
    y = (rng.uniform(size=n) < truth[:n]).astype(float)
    yhat = yhat_all[:n]
    strata = ["even" if i % 2 == 0 else "odd" for i in range(n)]
    strata_u = ["even" if i % 2 == 0 else "odd" for i in range(n, n + big_n)]
    member = np.array(strata, dtype=object)[:, None] == np.array(["even", "odd"], dtype=object)
    unclipped = label_ceiling(y, np.column_stack([member, member * yhat[:, None]]).astype(float))
    odd = np.array(strata) == "odd"
    assert np.corrcoef(y[odd], yhat[odd])[0, 1] < -0.3
    ceiling = clipped_ceiling(y, yhat, strata)
    # The odd stratum's judge is worth nothing: its residual is its own spread around its level.
    centred = np.where(odd, y - y[odd].mean(), 0.0)
    even = ~odd
    lam = np.clip(np.cov(y[even], yhat[even], ddof=0)[0, 1] / np.var(yhat[even]), 0, 1)
    centred[even] = y[even] - y[even].mean() - lam * (yhat[even] - yhat[even].mean())
    assert ceiling == pytest.approx(1 / (np.sum(centred**2) / np.sum((y - y.mean()) ** 2)), rel=1e-12)
    assert ceiling < unclipped
    estimate = stratified_ppi_mean(y, yhat, strata, yhat_all[n:], strata_u)
    assert estimate.effective_n <= n * ceiling * 1.05
    assert estimate.effective_n >= 0.9 * n * ceiling, "near its ceiling can show"


@pytest.mark.parametrize("n", [50, 100])
def test_three_judges_combined_cover_the_truth_at_fifty_and_a_hundred_labels(n):
    """4,000 simulated studies of n labels and 1,000 judged pairs, three judges of different accuracy:
    the 95 % interval holds the truth at least 94 % of the time (92.4 % and 94.0 % with the plain
    variance and z, which ignore the three weights fitted on the same labels)."""
    rng = np.random.default_rng(0)
    big_n, hits, reps = 1000, 0, 4000
    for _ in range(reps):
        truth = rng.beta(2, 2, n + big_n)  # E[Y] = ½
        y = (rng.uniform(size=n) < truth[:n]).astype(float)
        yhat = np.clip(truth[:, None] + rng.normal(0, [0.15, 0.25, 0.35], (n + big_n, 3)), 0, 1)
        estimate = multi_judge_ppi_mean(y, yhat[:n], yhat[n:])
        hits += estimate.low <= 0.5 <= estimate.high
    assert hits / reps >= 0.94


def test_a_model_with_one_pair_nobody_labelled_is_corrected_without_combining_judges():
    """Several judges' weights need their covariance on two unlabelled pairs or more: with one, the
    estimate is one judge's (it raised, and failed a whole win-rate refresh)."""
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 10).astype(float)
    judge = np.clip(labels + rng.normal(0, 0.3, 10), 0, 1)
    others = np.column_stack([np.clip(labels + rng.normal(0, 0.4, 10), 0, 1)])
    chosen = choose(labels, judge, [0.7], others=others, others_unlabelled=np.array([[0.6]]))
    assert chosen.estimator != MULTI_JUDGE and np.isfinite(chosen.estimate.value)
    asked = choose(labels, judge, [0.7], others=others, others_unlabelled=np.array([[0.6]]), asked=MULTI_JUDGE)
    assert asked.estimator != MULTI_JUDGE and asked.reason
