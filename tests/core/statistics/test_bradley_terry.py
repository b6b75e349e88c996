from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from evalhub.core.statistics import bradley_terry as bt


def simulate(strengths_elo: dict[str, float], battles: int, seed: int, tie_share: float = 0.0) -> list[tuple]:
    """Battles between random pairs, won with the Bradley–Terry probability; a share of battles
    that would have been won is a tie instead (which keeps the expected score unchanged when
    split evenly between the two directions)."""
    rng = np.random.default_rng(seed)
    names = list(strengths_elo)
    out = []
    for _ in range(battles):
        i, j = rng.choice(len(names), size=2, replace=False)
        a, b = names[i], names[j]
        if rng.random() < tie_share:
            out.append((a, b, "tie"))
            continue
        p = bt.win_probability(strengths_elo[a], strengths_elo[b])
        out.append((a, b, "a" if rng.random() < p else "b"))
    return out


def centred(values: dict[str, float]) -> dict[str, float]:
    mean = sum(values.values()) / len(values)
    return {k: v - mean + bt.CENTRE for k, v in values.items()}


TRUTH = centred({"m1": 1250.0, "m2": 1120.0, "m3": 1000.0, "m4": 930.0, "m5": 800.0})


def test_it_recovers_known_strengths_from_simulated_battles():
    board = bt.leaderboard(simulate(TRUTH, 20_000, seed=1), rounds=50, ridge=0.0)
    fitted = {r.model: r.rating for r in board.ratings}
    assert [r.model for r in board.ratings] == ["m1", "m2", "m3", "m4", "m5"]
    for name, truth in TRUTH.items():
        assert fitted[name] == pytest.approx(truth, abs=25)
    assert sum(fitted.values()) / len(fitted) == pytest.approx(bt.CENTRE)


def test_it_matches_a_direct_scipy_fit_of_the_same_likelihood_battle_by_battle():
    from scipy.optimize import minimize

    battles = simulate(TRUTH, 400, seed=2, tie_share=0.15)
    names = sorted(TRUTH)
    index = {n: i for i, n in enumerate(names)}
    first = np.array([index[a] for a, _, _ in battles])
    second = np.array([index[b] for _, b, _ in battles])
    score = np.array([{"a": 1.0, "b": 0.0, "tie": 0.5}[o] for *_, o in battles])
    ridge = 0.01

    def objective(beta):
        d = beta[first] - beta[second]
        nll = -(score * -np.logaddexp(0, -d) + (1 - score) * -np.logaddexp(0, d)).sum()
        return nll + 0.5 * ridge * (beta**2).sum()

    direct = minimize(objective, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-10}).x
    direct = bt.CENTRE + (direct - direct.mean()) * 400 / math.log(10)
    ours = bt.ratings(bt.collect(battles, names), ridge=ridge)
    np.testing.assert_allclose(ours, direct, atol=1e-3)


def test_it_matches_arenas_logistic_regression_with_ties_split_in_two():
    from sklearn.linear_model import LogisticRegression

    battles = simulate(TRUTH, 600, seed=3, tie_share=0.2)
    names = sorted(TRUTH)
    index = {n: i for i, n in enumerate(names)}
    rows, labels = [], []
    # Arena: every battle twice; a tie once as a win for each side, a decisive battle twice as itself.
    for a, b, outcome in battles:
        x = np.zeros(len(names))
        x[index[a]], x[index[b]] = math.log(10), -math.log(10)
        for y in [1, 0] if outcome == "tie" else [int(outcome == "a")] * 2:
            rows.append(x)
            labels.append(y)
    model = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-10, max_iter=10_000)
    model.fit(np.array(rows), np.array(labels))
    arena = 400 * model.coef_[0]
    arena = arena - arena.mean() + bt.CENTRE
    ours = bt.ratings(bt.collect(battles, names), ridge=0.0)
    np.testing.assert_allclose(ours, arena, atol=1e-2)


def test_bootstrap_intervals_cover_the_truth_at_about_the_nominal_rate():
    covered = total = 0
    for seed in range(40):
        board = bt.leaderboard(simulate(TRUTH, 500, seed=100 + seed), rounds=200, seed=seed, ridge=0.0)
        for r in board.ratings:
            covered += r.low <= TRUTH[r.model] <= r.high
            total += 1
    # 200 model-intervals at a nominal 95%: a rate outside [0.88, 0.99] would be a real miscalibration.
    assert 0.88 <= covered / total <= 0.99


def test_a_model_that_never_lost_gets_a_finite_rating_under_the_default_prior():
    board = bt.leaderboard([("x", "y", "a")] * 12, rounds=50)
    top, bottom = board.ratings
    assert top.model == "x"
    assert math.isfinite(top.rating)
    assert math.isfinite(top.high)
    assert top.rating - bottom.rating > 400  # decisively better, but not infinitely
    assert top.rating + bottom.rating == pytest.approx(2 * bt.CENTRE)


def test_ties_count_half_and_two_even_models_rate_the_same():
    board = bt.leaderboard([("x", "y", "tie")] * 4 + [("x", "y", "a"), ("y", "x", "a")], rounds=20)
    assert {r.model: r.rating for r in board.ratings} == {"x": pytest.approx(1000), "y": pytest.approx(1000)}
    x = board.models.index("x")
    assert board.games[x][1 - x] == 6
    assert board.ties[x][1 - x] == 4
    assert board.win_rate(x, 1 - x) == pytest.approx(0.5)
    record = {r.model: (r.wins, r.losses, r.ties) for r in board.ratings}
    assert record == {"x": (1, 1, 4), "y": (1, 1, 4)}


def test_the_win_matrix_counts_each_side_from_both_orders():
    board = bt.leaderboard([("x", "y", "a"), ("y", "x", "a"), ("y", "x", "b"), ("x", "z", "tie")], rounds=10)
    x, y, z = (board.models.index(n) for n in "xyz")
    assert board.wins[x][y] == 2
    assert board.wins[y][x] == 1
    assert board.wins[x][z] == 0.5
    assert board.wins[z][x] == 0.5
    assert board.games[x][y] == 3
    assert board.games[y][z] == 0
    assert board.win_rate(y, z) is None


def test_arena_rank_counts_models_whose_lower_bound_beats_this_upper_bound():
    assert bt.ranks(low=[1100, 1000, 1050, 800], high=[1200, 1090, 1150, 900]) == [1, 2, 1, 4]
    import numpy as np

    ranked = bt.ranks(low=list(np.array([1100.0, 1000.0])), high=list(np.array([1200.0, 1090.0])))
    assert [type(r) for r in ranked] == [int, int]  # numpy integers would export as strings


def test_a_bootstrap_resample_is_a_draw_of_the_same_number_of_battles():
    battles = bt.collect([("x", "y", "a")] * 7 + [("y", "z", "tie")] * 3)
    draws = np.random.default_rng(0).multinomial(battles.total, battles.count / battles.total, size=5)
    assert (draws.sum(axis=1) == 10).all()
    samples = bt.bootstrap_ratings(battles, rounds=30, seed=4)
    assert samples.shape == (30, 3)
    assert np.allclose(samples.mean(axis=1), bt.CENTRE)


def many_model_battles(models: int, battles: int, seed: int = 0) -> bt.Battles:
    rng = np.random.default_rng(seed)
    first, second = rng.integers(models, size=(2, battles))
    keep = first != second
    strength = rng.normal(0, 1, models)
    won = rng.uniform(size=battles) < 1 / (1 + np.exp(strength[second] - strength[first]))
    names = [f"m{i:03d}" for i in range(models)]
    return bt.collect(
        (names[a], names[b], "a" if w else "b") for a, b, w in zip(first[keep], second[keep], won[keep], strict=True)
    )


def test_bootstrap_resamples_are_the_same_whatever_the_stack_they_are_fitted_in():
    battles = many_model_battles(12, 600, seed=2)
    one_stack = bt.bootstrap_ratings(battles, rounds=25, seed=3)
    one_at_a_time = bt.bootstrap_ratings(battles, rounds=25, seed=3, budget=1)
    assert bt.resamples_per_stack(12, len(battles.count), budget=1) == 1
    assert np.allclose(one_stack, one_at_a_time, atol=1e-8)


def test_a_bootstrap_stays_within_its_memory_budget():
    """At 1,000 models a stack of 100 resamples held 6.7 GiB; the stack is now sized by a budget."""
    import tracemalloc

    battles = many_model_battles(250, 20_000, seed=1)
    budget = 16 * 2**20
    tracemalloc.start()
    try:
        bt.bootstrap_ratings(battles, rounds=20, seed=0, budget=budget)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * budget
    assert bt.resamples_per_stack(1000, 3_000_000) == 1


def test_the_share_of_resamples_above_is_counted_in_stacks_as_at_once():
    resampled = np.random.default_rng(0).normal(size=(37, 9))
    at_once = (resampled[:, :, None] > resampled[:, None, :]).mean(axis=0)
    assert np.array_equal(bt._share_above(resampled, budget=2 * 81), at_once)


def test_the_fit_is_deterministic_for_a_seed():
    battles = simulate(TRUTH, 300, seed=5)
    one, two = bt.leaderboard(battles, rounds=40, seed=9), bt.leaderboard(battles, rounds=40, seed=9)
    assert [(r.low, r.high) for r in one.ratings] == [(r.low, r.high) for r in two.ratings]


def test_bad_battles_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="outcome"):
        bt.collect([("x", "y", "x")])
    with pytest.raises(ValueError, match="two different models"):
        bt.collect([("x", "x", "a")])


def test_no_battles_make_an_empty_board():
    board = bt.leaderboard([])
    assert board.ratings == []
    assert board.models == ()


# --- disconnected comparisons, P(row above column), style control ----------------------------------


def test_models_never_compared_with_the_rest_are_rated_and_ranked_in_their_own_group():
    battles = simulate(TRUTH, 2_000, seed=4) + [("x", "y", "a")] * 6 + [("x", "y", "b")] * 2
    board = bt.leaderboard(battles, rounds=50)
    by_model = {r.model: r for r in board.ratings}
    assert board.groups == 2
    assert {by_model[m].group for m in TRUTH} == {1}
    assert by_model["x"].group == by_model["y"].group == 2
    assert by_model["x"].rank == 1
    assert by_model["y"].rank in (1, 2)
    # Each group is centred on its own mean: x and y say nothing about m1 … m5.
    assert (by_model["x"].rating + by_model["y"].rating) / 2 == pytest.approx(bt.CENTRE)
    index = {m: i for i, m in enumerate(board.models)}
    assert board.beats[index["x"]][index["m1"]] is None
    assert [r.model for r in board.ratings][-2:] == ["x", "y"], "the smaller group is listed after the larger"


def test_p_row_above_column_is_the_share_of_resamples_and_the_two_directions_sum_to_one():
    battles = simulate(TRUTH, 3_000, seed=5)
    board = bt.leaderboard(battles, rounds=80, seed=3)
    resampled = bt.bootstrap_ratings(bt.collect(battles), rounds=80, seed=3)
    index = {m: i for i, m in enumerate(board.models)}
    i, j = index["m2"], index["m3"]
    assert board.beats[i][j] == pytest.approx(float((resampled[:, i] > resampled[:, j]).mean()))
    assert board.beats[i][j] + board.beats[j][i] == pytest.approx(1.0)
    assert board.beats[index["m1"]][index["m5"]] == 1.0


def styled_battles(seed: int, n: int = 3000):
    """m-long writes twice as much as the others and wins more for it; quality is equal."""
    rng = np.random.default_rng(seed)
    names = ["m-long", "m2", "m3", "m4"]
    battles, first, second = [], [], []
    for _ in range(n):
        a, b = rng.choice(names, size=2, replace=False)
        length = {m: (800 if m == "m-long" else 400) * rng.uniform(0.5, 1.5) for m in (a, b)}
        features = {m: (length[m], rng.integers(0, 3), rng.integers(0, 5), rng.integers(0, 4)) for m in (a, b)}
        share = (length[a] - length[b]) / (length[a] + length[b])
        p = 1 / (1 + math.exp(-4.0 * share))  # only length matters
        roll = rng.random()
        battles.append((a, b, "tie" if abs(roll - p) < 0.05 else ("a" if roll < p else "b")))
        first.append(features[a])
        second.append(features[b])
    return battles, np.array(first, dtype=float), np.array(second, dtype=float)


def test_style_control_equals_a_statsmodels_logistic_regression_with_the_same_features():
    import statsmodels.api as sm

    battles, first, second = styled_battles(seed=6, n=600)
    models = sorted({m for a, b, _ in battles for m in (a, b)})
    controlled, gamma = bt.style_controlled(battles, first, second, models, rounds=0, ridge=0.0)
    # The same likelihood, Arena's way: every battle twice, a tie once won and once lost; one model's
    # column dropped for identification.
    z = bt.style_differences(first, second)
    rows, target = [], []
    for (a, b, outcome), features in zip(battles, z, strict=True):
        x = np.zeros(len(models))
        x[models.index(a)], x[models.index(b)] = 1.0, -1.0
        for copy in range(2):
            rows.append(np.r_[x[1:], features])
            target.append(float(copy == 0) if outcome == "tie" else float(outcome == "a"))
    fitted = sm.Logit(np.array(target), np.array(rows)).fit(disp=0, method="newton", tol=1e-12)
    beta = np.r_[0.0, fitted.params[: len(models) - 1]]
    expected = bt.to_rating(beta - beta.mean())
    for model, value in zip(models, expected, strict=True):
        assert controlled[model][0] == pytest.approx(value, abs=1e-3)
    assert gamma == pytest.approx(fitted.params[len(models) - 1 :] * 400 / math.log(10), abs=1e-3)


def test_style_control_takes_the_length_advantage_away():
    battles, first, second = styled_battles(seed=3)
    raw = {r.model: r.rating for r in bt.leaderboard(battles, rounds=0).ratings}
    controlled, gamma = bt.style_controlled(battles, first, second, sorted(raw), rounds=30)
    assert raw["m-long"] - raw["m2"] > 100
    assert abs(controlled["m-long"][0] - controlled["m2"][0]) < 25
    assert gamma[0] > 50, "length carries the effect, nothing else"
    assert all(abs(g) < 25 for g in gamma[1:]), "length carries the effect, nothing else"
    low, high = controlled["m-long"][1:]
    assert low < controlled["m-long"][0] < high


def test_style_control_on_a_fixed_order_file_keeps_each_models_chance_against_the_always_first_model():
    # AlpacaEval's layout: the baseline is always shown first and always writes more. Quality is equal;
    # only length moves the judge. Centred features pinned "no style difference" at the mean difference,
    # which moved the baseline's strength by γ·mean and every model's chance against it.
    rng = np.random.default_rng(11)
    battles, first, second = [], [], []
    for _ in range(4000):
        other = str(rng.choice(["m2", "m3", "m4"]))
        long, short = 900 * rng.uniform(0.8, 1.5), 400 * rng.uniform(0.5, 1.5)
        share = (long - short) / (long + short)
        p = 1 / (1 + math.exp(-3.0 * share))
        battles.append(("base", other, "a" if rng.random() < p else "b"))
        first.append((long, 0, 0, 0))
        second.append((short, 0, 0, 0))
    models = ["base", "m2", "m3", "m4"]
    controlled, _ = bt.style_controlled(battles, np.array(first), np.array(second), models, rounds=0)
    for other in ("m2", "m3", "m4"):
        assert abs(controlled["base"][0] - controlled[other][0]) < 30, other


def test_style_features_mean_no_difference_at_zero():
    z = bt.style_differences(np.array([[300.0], [300.0], [500.0]]), np.array([[300.0], [100.0], [500.0]]))
    assert z[0, 0] == 0.0
    assert z[2, 0] == 0.0
    assert z[1, 0] > 0


def test_a_group_with_too_few_battles_for_its_style_parameters_says_why():
    assert bt.too_few_for_style(battles=200, models=3, features=4) == ""
    reason = bt.too_few_for_style(battles=12, models=3, features=4)
    assert "12 battles for 3 models and 4 style features" in reason
    assert "at least 60" in reason


# --- LMArena's current method (arena-rank): sandwich intervals and reweighted pairs ----------------


def _uneven_battles(seed: int) -> list[tuple[str, str, str]]:
    """Uneven pair frequencies (one pair shown ten times as often) and 10 % ties, as in Arena."""
    rng = np.random.default_rng(seed)
    strengths = {"m1": 1150.0, "m2": 1050.0, "m3": 1000.0, "m4": 900.0}
    pairs = [("m1", "m2", 1500), ("m1", "m3", 150), ("m2", "m3", 150), ("m3", "m4", 300), ("m2", "m4", 100)]
    out = []
    for a, b, n in pairs:
        for _ in range(n):
            first, second = (a, b) if rng.random() < 0.5 else (b, a)
            if rng.random() < 0.1:
                out.append((first, second, "tie"))
            else:
                p = bt.win_probability(strengths[first], strengths[second])
                out.append((first, second, "a" if rng.random() < p else "b"))
    return out


def _statsmodels_fit(battles, models, weights=None):
    """Arena's design (one row per battle, +1/−1 columns, the first model's column dropped) fitted by
    statsmodels' binomial GLM with fractional outcomes (a tie is ½) and its HC0 covariance."""
    import statsmodels.api as sm

    x = np.zeros((len(battles), len(models) - 1))
    y = np.zeros(len(battles))
    for row, (a, b, outcome) in enumerate(battles):
        for model, sign in ((a, 1.0), (b, -1.0)):
            if models.index(model):
                x[row, models.index(model) - 1] = sign
        y[row] = {"a": 1.0, "b": 0.0, "tie": 0.5}[outcome]
    return sm.GLM(y, x, family=sm.families.Binomial(), var_weights=weights).fit(cov_type="HC0", tol=1e-12)


def _differences(values: np.ndarray) -> np.ndarray:
    """Strengths relative to the first model's."""
    return values[1:] - values[0]


def test_sandwich_intervals_equal_statsmodels_robust_hc0_covariance_on_arenas_design():
    battles = _uneven_battles(seed=1)
    collected = bt.collect(battles)
    models = list(collected.models)
    point = bt.ratings(collected, ridge=0.0)
    fitted = _statsmodels_fit(battles, models)
    beta = (point - bt.CENTRE) / (bt.SCALE / math.log(bt.BASE))
    assert _differences(beta) == pytest.approx(fitted.params, abs=1e-6)
    covariance = bt.sandwich_covariance(collected, point, ridge=0.0)
    # The covariance of each model's strength minus the first model's: statsmodels' parameters.
    contrast = np.hstack([-np.ones((len(models) - 1, 1)), np.eye(len(models) - 1)])
    assert contrast @ covariance @ contrast.T == pytest.approx(fitted.cov_params(), rel=1e-5)


def test_reweighted_ratings_and_intervals_equal_a_weighted_statsmodels_fit():
    battles = _uneven_battles(seed=2)
    collected = bt.collect(battles)
    models = list(collected.models)
    weights = bt.pair_weights(collected)
    point = bt.ratings(collected, ridge=0.0, weights=weights)
    count = Counter(frozenset((a, b)) for a, b, _ in battles)
    per_battle = np.array([1 / max(count[frozenset((a, b))], bt.MIN_PAIR_COUNT) for a, b, _ in battles])
    fitted = _statsmodels_fit(battles, models, per_battle)
    beta = (point - bt.CENTRE) / (bt.SCALE / math.log(bt.BASE))
    assert _differences(beta) == pytest.approx(fitted.params, abs=1e-6)
    covariance = bt.sandwich_covariance(collected, point, ridge=0.0, weights=weights)
    contrast = np.hstack([-np.ones((len(models) - 1, 1)), np.eye(len(models) - 1)])
    assert contrast @ covariance @ contrast.T == pytest.approx(fitted.cov_params(), rel=1e-5)


def test_a_sandwich_board_draws_rating_plus_or_minus_z_standard_errors_and_covers_the_bootstrap():
    battles = _uneven_battles(seed=3)
    sandwich = {r.model: r for r in bt.leaderboard(battles, interval=bt.SANDWICH).ratings}
    boot = {r.model: r for r in bt.leaderboard(battles, rounds=300).ratings}
    for model, row in sandwich.items():
        assert row.rating == pytest.approx(boot[model].rating)
        assert row.high - row.rating == pytest.approx(row.rating - row.low)
        # The two intervals estimate the same spread: widths within 30 % of each other.
        assert (row.high - row.low) == pytest.approx(boot[model].high - boot[model].low, rel=0.3)
    board = bt.leaderboard(battles, interval=bt.SANDWICH)
    assert board.rounds == 0
    assert board.interval == bt.SANDWICH
    with pytest.raises(ValueError, match="interval must be one of"):
        bt.leaderboard(battles, interval="guess")


def test_the_win_matrices_of_many_resamples_equal_the_battles_counted_one_by_one():
    """The aggregation behind every fit and resample (a bincount now; a dense cells × M² map before,
    which needed 33 GiB at 200 models) gives each resample's wins exactly as counting battles does."""
    rng = np.random.default_rng(3)
    names = [f"m{i}" for i in range(7)]
    battles = []
    for _ in range(400):
        a, b = rng.choice(7, 2, replace=False)
        battles.append((names[a], names[b], str(rng.choice(["a", "b", "tie"]))))
    collected = bt.collect(battles)
    counts = rng.integers(0, 5, size=(3, len(collected.count))).astype(float)
    wins = bt._aggregate(collected, counts)
    expected = np.zeros((3, 7, 7))
    for r in range(3):
        for cell in range(len(collected.count)):
            i, j, share = collected.first[cell], collected.second[cell], collected.outcome[cell]
            expected[r, i, j] += counts[r, cell] * share
            expected[r, j, i] += counts[r, cell] * (1 - share)
    assert wins == pytest.approx(expected, abs=1e-12)


# The 97.5th percentile of the standard normal: a 95 % two-sided interval is rating ± this many SEs.
Z_95 = 1.959963984540054


def test_a_bootstrap_board_draws_exactly_the_2_5th_and_97_5th_percentiles_of_its_resamples():
    """The coverage test above accepts a miscalibrated level (a 97.5 % interval covers 0.88-0.99 too);
    this one pins the level: the bounds are those percentiles of the same resamples."""
    battles = simulate(TRUTH, 400, seed=5)
    board = bt.leaderboard(battles, rounds=120, seed=9)
    collected = bt.collect(battles)
    resampled = bt.bootstrap_ratings(collected, 120, seed=9)
    low, high = np.percentile(resampled, [2.5, 97.5], axis=0)
    for r in board.ratings:
        i = collected.models.index(r.model)
        assert (r.low, r.high) == pytest.approx((low[i], high[i]), abs=1e-9)


def test_a_sandwich_board_draws_exactly_z_0_975_standard_errors_either_side():
    battles = _uneven_battles(seed=3)
    board = bt.leaderboard(battles, interval=bt.SANDWICH)
    collected = bt.collect(battles)
    rating = np.array([next(r.rating for r in board.ratings if r.model == m) for m in collected.models])
    se = np.sqrt(np.diag(bt.sandwich_covariance(collected, rating))) * bt._ELO_PER_NAT
    for r in board.ratings:
        i = collected.models.index(r.model)
        assert (r.low, r.high) == pytest.approx((r.rating - Z_95 * se[i], r.rating + Z_95 * se[i]), abs=1e-9)


def test_a_style_controlled_board_draws_exactly_the_2_5th_and_97_5th_percentiles_of_its_resamples():
    rng = np.random.default_rng(4)
    battles = simulate(TRUTH, 300, seed=6)
    first, second = rng.integers(50, 500, (len(battles), 1)), rng.integers(50, 500, (len(battles), 1))
    models = sorted(TRUTH)
    controlled, _ = bt.style_controlled(battles, first, second, models, rounds=40, seed=2)
    index = {m: i for i, m in enumerate(models)}
    a = np.array([index[x] for x, _, _ in battles])
    b = np.array([index[y] for _, y, _ in battles])
    outcome = np.array([{bt.A: 1.0, bt.B: 0.0, bt.TIE: 0.5}[o] for _, _, o in battles])
    features = bt.style_differences(first, second)
    draws = np.random.default_rng(2)
    resampled = [
        bt.fit_with_style(
            a,
            b,
            outcome,
            features,
            len(models),
            bt.DEFAULT_RIDGE,
            np.bincount(draws.integers(0, len(battles), len(battles)), minlength=len(battles)),
        )[0]
        for _ in range(40)
    ]
    low, high = np.percentile(bt.to_rating(np.array(resampled)), [2.5, 97.5], axis=0)
    for model, (_, model_low, model_high) in controlled.items():
        assert (model_low, model_high) == pytest.approx((low[index[model]], high[index[model]]), abs=1e-9)


@pytest.mark.parametrize("interval", ["bootstrap", "sandwich"])
def test_a_board_is_the_same_whichever_way_round_and_in_whatever_order_its_battles_are_written(interval):
    """The same battles with some written b-then-a (the outcome mirrored) and listed in another order:
    the same ratings, intervals and ranks, bootstrap draws included (they moved with the cells' names)."""
    from evalhub.core.statistics.bradley_terry import leaderboard

    rng = np.random.default_rng(9)
    models = ["m1", "m2", "m3", "m4"]
    battles = []
    for _ in range(300):
        a, b = rng.choice(models, 2, replace=False)
        battles.append((str(a), str(b), str(rng.choice(["a", "a", "b", "tie"]))))
    mirrored = {"a": "b", "b": "a", "tie": "tie"}
    rewritten = [(b, a, mirrored[o]) if rng.uniform() < 0.5 else (a, b, o) for a, b, o in battles]
    rewritten = [rewritten[i] for i in rng.permutation(len(rewritten))]
    first, second = (leaderboard(given, rounds=100, interval=interval) for given in (battles, rewritten))
    assert [r.as_dict() for r in second.ratings] == [r.as_dict() for r in first.ratings]
    assert second.beats == first.beats
