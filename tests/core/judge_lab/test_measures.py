"""The judge lab's statistics against independent computations (scikit-learn, krippendorff,
statsmodels) and hand-computed values, and a report that finds planted biases."""

from __future__ import annotations

import random
import warnings

import krippendorff
import numpy as np
import pytest
import statsmodels.api as sm
from sklearn.metrics import cohen_kappa_score

from evalhub.core.judge_lab.measures import (
    FIRST,
    NO_VERDICT,
    SECOND,
    TIE,
    Label,
    Pair,
    agreement_and_kappa,
    calibration,
    confusion,
    kappa,
    krippendorff_alpha,
    krippendorff_alpha_from_counts,
    length_slope,
    logistic_fit,
    paired_difference,
    standardised,
    verdicts_of,
    wilson,
)
from evalhub.core.judge_lab.report import build_report
from evalhub.core.judge_lab.report_types import CONSENSUS, MODEL, PERSON, DebateReference, JudgeInfo


def random_verdicts(seed: int, n: int, agree: float) -> tuple[list[int], list[int]]:
    rng = random.Random(seed)
    reference = [rng.choice([FIRST, SECOND, TIE]) for _ in range(n)]
    predicted = [r if rng.random() < agree else rng.choice([FIRST, SECOND, TIE, NO_VERDICT]) for r in reference]
    return predicted, reference


@pytest.mark.parametrize("seed", range(5))
def test_kappa_equals_scikit_learn_with_an_unreadable_answer_as_its_own_category(seed):
    predicted, reference = random_verdicts(seed, 120, 0.6)
    assert kappa(predicted, reference) == pytest.approx(cohen_kappa_score(predicted, reference), abs=1e-12)


def test_the_confusion_matrix_counts_reference_rows_against_judge_columns():
    table = confusion([FIRST, FIRST, SECOND, NO_VERDICT, TIE], [FIRST, SECOND, SECOND, TIE, TIE])
    assert table == [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]]


def test_agreement_counts_an_unreadable_answer_as_a_miss_and_its_interval_brackets_it():
    predicted, reference = random_verdicts(1, 200, 0.7)
    clusters = [i // 2 for i in range(200)]
    agreement, kappa_ci = agreement_and_kappa(predicted, reference, clusters)
    assert agreement.value == sum(p == r for p, r in zip(predicted, reference, strict=True)) / 200
    assert agreement.low < agreement.value < agreement.high
    assert kappa_ci.low < kappa_ci.value < kappa_ci.high
    assert kappa_ci.value == pytest.approx(cohen_kappa_score(predicted, reference))


def test_the_kappa_interval_resamples_prompts_not_pairs():
    # Ten prompts of twenty identical pairs each: resampling prompts sees ten units, so the interval
    # is far wider than resampling 200 independent pairs would make it.
    rng = random.Random(3)
    predicted, reference, clusters = [], [], []
    for prompt in range(10):
        r = rng.choice([FIRST, SECOND])
        p = r if prompt < 7 else (SECOND if r == FIRST else FIRST)
        predicted += [p] * 20
        reference += [r] * 20
        clusters += [prompt] * 20
    by_prompt = agreement_and_kappa(predicted, reference, clusters)[0]
    by_pair = agreement_and_kappa(predicted, reference, list(range(200)))[0]
    assert by_prompt.value == by_pair.value == 0.7
    assert (by_prompt.high - by_prompt.low) > 2 * (by_pair.high - by_pair.low)


@pytest.mark.parametrize("seed", range(3))
def test_krippendorffs_alpha_equals_the_krippendorff_package(seed):
    rng = random.Random(seed)
    raters, units = 4, 60
    matrix = np.full((raters, units), np.nan)
    ratings = []
    for u in range(units):
        truth = rng.choice([0, 1, 2])
        unit = []
        for r in range(raters):
            if rng.random() < 0.25:
                continue  # this person did not see the pair
            value = truth if rng.random() < 0.7 else rng.choice([0, 1, 2])
            matrix[r, u] = value
            unit.append(value)
        ratings.append(unit)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    result = krippendorff_alpha(ratings)
    assert result.value == pytest.approx(expected, abs=1e-12)
    assert result.low < result.value < result.high
    # Resampled by prompt (two pairs each here), as a report does: the same alpha, an interval over prompts.
    counts = np.array([[unit.count(c) for c in (0, 1, 2)] for unit in ratings], dtype=float)
    by_prompt = krippendorff_alpha_from_counts(counts, clusters=[u // 2 for u in range(len(ratings))])
    assert by_prompt.value == result.value
    assert by_prompt.low < result.value < by_prompt.high
    assert krippendorff_alpha_from_counts(counts, clusters=range(len(ratings))) == result


def test_ece_and_brier_by_hand():
    # Bins [0.1, 0.2): p 0.15, 0.15, outcome 1, 0 → |0.5 − 0.15| · 2/5; bin [0.9, 1.0]: p 0.9, 1.0, 0.95
    # with outcomes 1, 1, 0 → |2/3 − 0.95| · 3/5.
    p = [0.15, 0.15, 0.9, 1.0, 0.95]
    y = [1, 0, 1, 1, 0]
    result = calibration(p, y)
    assert result.ece == pytest.approx(0.35 * 2 / 5 + abs(2 / 3 - 0.95) * 3 / 5)
    assert result.brier == pytest.approx((0.85**2 + 0.15**2 + 0.1**2 + 0 + 0.95**2) / 5)
    assert [b["n"] for b in result.bins] == [0, 2, 0, 0, 0, 0, 0, 0, 0, 3]
    assert result.bins[9]["accuracy"] == pytest.approx(2 / 3)


def test_a_probability_turned_back_from_the_other_order_stays_in_its_bin():
    """Found by the invariance property test: 0.2 written for the other order is 0.8, and read back
    1 − 0.8 = 0.19999999999999996, which fell a bin lower and moved ECE by 0.10."""
    p = [0.2, 0.3, 0.7, 0.1]
    turned = [1 - (1 - x) for x in p]
    assert turned != p
    found, expected = calibration(turned, [1, 0, 1, 0]), calibration(p, [1, 0, 1, 0])
    assert [b["n"] for b in found.bins] == [b["n"] for b in expected.bins]
    assert found.ece == pytest.approx(expected.ece, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_the_length_slope_equals_a_statsmodels_logistic_regression(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(20, 400, size=(300, 2))
    difference = lengths[:, 0] - lengths[:, 1]
    x = difference / np.std(difference, ddof=1)
    picked_first = rng.random(300) < 1 / (1 + np.exp(-(0.3 + 0.8 * x)))
    pairs = [Pair(cluster=i, length_1=int(a), length_2=int(b)) for i, (a, b) in enumerate(lengths)]
    picks = [(FIRST if first else SECOND, pair) for first, pair in zip(picked_first, pairs, strict=True)]
    fitted = sm.Logit(picked_first.astype(float), sm.add_constant(x)).fit(disp=0)
    assert length_slope(picks) == pytest.approx(fitted.params[1], abs=1e-6)
    assert logistic_fit(list(x), list(picked_first.astype(int)))[0] == pytest.approx(fitted.params[0], abs=1e-6)


def test_a_logistic_fit_that_separates_the_classes_has_no_slope():
    assert logistic_fit([-2, -1, 1, 2], [0, 0, 1, 1]) is None


def test_a_logistic_fit_finds_separated_classes_whatever_the_scale_of_x_and_does_not_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "overflow encountered in exp" became an error here
        assert logistic_fit([-300, -200, 200, 300], [0, 0, 1, 1]) is None  # once (-7.0, 0.22): "a slope"
        assert logistic_fit([-3, -2, 2, 3, 2], [0, 0, 1, 1, 0]) is None  # touching at x = 2: still no maximum
    assert standardised([3, 3, 3]) is None


def test_the_wilson_interval_by_hand():
    # 8 of 10: centre (0.8 + 1.92/10) / 1.384, half-width 1.96·√(0.016 + 0.0096)/1.384.
    interval = wilson(8, 10)
    assert interval.low == pytest.approx(0.4902, abs=1e-4)
    assert interval.high == pytest.approx(0.9433, abs=1e-4)


def test_a_paired_difference_is_the_second_agreement_minus_the_first():
    difference = paired_difference([True, False, False, True] * 5, [True] * 20, [i // 2 for i in range(20)])
    assert difference.value == 0.5
    assert difference.low <= 0.5 <= difference.high
    # On two prompts a bootstrap interval would pretend certainty: there is none.
    few = paired_difference([True, False, False, True], [True, True, True, True], [1, 1, 2, 2])
    assert (few.value, few.low, few.high) == (0.5, None, None)


def test_a_judges_verdict_is_its_majority_in_the_order_it_was_first_shown():
    labels = [
        Label("j", "p", FIRST, first_shown=True),
        Label("j", "p", SECOND, first_shown=False),
        Label("j", "q", FIRST),
        Label("j", "q", SECOND),
        Label("j", "r", TIE, first_shown=False, probability=0.4),
        Label("j", "r", TIE, first_shown=False, probability=0.6),
    ]
    verdicts = verdicts_of(labels)
    assert verdicts["primary"] == {"p": FIRST, "q": NO_VERDICT, "r": TIE}
    assert verdicts["other_order"] == {"p": SECOND}
    assert verdicts["probability"] == {"r": 0.5}


# --- planted judges --------------------------------------------------------------------------------


def planted(seed: int = 7, prompts: int = 150):
    """Three people who see the truth 90 % of the time, and four judges with one flaw each."""
    rng = random.Random(seed)
    pairs, labels, settled = {}, {}, {}
    judges = [
        JudgeInfo("person:ana", "ana", PERSON),
        JudgeInfo("person:ben", "ben", PERSON),
        JudgeInfo("person:cy", "cy", PERSON),
        JudgeInfo("first-position", "first-position", MODEL),
        JudgeInfo("longer", "longer", MODEL),
        JudgeInfo("calibrated", "calibrated", MODEL),
        JudgeInfo("overconfident", "overconfident", MODEL),
    ]
    for judge in judges:
        labels[judge.id] = []
    for prompt in range(prompts):
        item = ("overall", prompt)
        length_1, length_2 = rng.randint(50, 400), rng.randint(50, 400)
        pairs[item] = Pair(cluster=prompt, length_1=length_1, length_2=length_2, model_1="m1", model_2="m2")
        p_first = rng.random()
        truth = FIRST if rng.random() < p_first else SECOND
        for person in ("person:ana", "person:ben", "person:cy"):
            seen = truth if rng.random() < 0.9 else (SECOND if truth == FIRST else FIRST)
            labels[person].append(Label(person, item, seen, first_shown=rng.random() < 0.5))
        # Always the response in the first position, asked in both orders.
        labels["first-position"] += [
            Label("first-position", item, FIRST, True),
            Label("first-position", item, SECOND, False),
        ]
        longer = FIRST if length_1 > length_2 else SECOND
        shorter = SECOND if longer == FIRST else FIRST
        labels["longer"].append(Label("longer", item, longer if rng.random() < 0.9 else shorter))
        calibrated = FIRST if p_first >= 0.5 else SECOND
        labels["calibrated"].append(Label("calibrated", item, calibrated, probability=p_first))
        noisy = min(1.0, max(0.0, p_first + rng.gauss(0, 0.35)))
        pick = FIRST if noisy >= 0.5 else SECOND
        labels["overconfident"].append(Label("overconfident", item, pick, probability=0.99 if pick == FIRST else 0.01))
        settled[item] = DebateReference(truth, CONSENSUS)
    return judges, labels, pairs, settled


def test_the_report_finds_every_planted_bias_and_ranks_the_faithful_judge_first():
    judges, labels, pairs, settled = planted()
    report = build_report(judges, labels, pairs, settled, resamples=300)
    by_id = {r.judge.id: r for r in report.judges}
    models = [r.judge.id for r in report.judges if r.judge.kind == MODEL]
    assert models[0] == "calibrated"

    position = by_id["first-position"]
    assert position.position.value == 1.0
    assert position.position_pairs == 150
    assert by_id["calibrated"].position_pairs == 0
    assert by_id["calibrated"].position.value is None

    longer = by_id["longer"]
    assert 0.85 < longer.longer_share < 0.95
    assert 0.35 < longer.people_longer_share < 0.65
    assert longer.length_coef > 2
    assert abs(longer.people_length_coef) < 0.5

    calibrated, overconfident = by_id["calibrated"].calibration, by_id["overconfident"].calibration
    assert calibrated.ece < 0.12 < 0.25 < overconfident.ece
    assert calibrated.brier < overconfident.brier
    assert by_id["first-position"].calibration is None

    assert 0.6 < report.people.alpha.value < 0.8
    assert report.people.alpha.low < report.people.alpha.value < report.people.alpha.high
    # A person is measured against the others' majority (where the other two split, against the
    # debate's consensus), never against a reference their own label made.
    for person in ("person:ana", "person:ben", "person:cy"):
        sources = by_id[person].reference_sources
        assert sources["people"] + sources.get("debate", 0) == 150
        assert sources["people"] > 100


def test_a_person_is_not_compared_with_their_own_label():
    item = ("overall", 1)
    judges = [JudgeInfo("a", "a", PERSON), JudgeInfo("b", "b", PERSON)]
    labels = {"a": [Label("a", item, FIRST)], "b": [Label("b", item, SECOND)]}
    report = build_report(judges, labels, {item: Pair(1, 10, 20)}, {}, resamples=50)
    assert [r.agreement.value for r in report.judges] == [0.0, 0.0]


def test_on_too_few_prompts_kappa_and_agreement_show_no_interval_instead_of_a_degenerate_one():
    from evalhub.core.judge_lab.measures import MIN_FOR_INTERVAL

    # Two pairs that agree: the bootstrap said κ 1.000 [1.00, 1.00].
    agreement, kappa_ci = agreement_and_kappa([FIRST, SECOND], [FIRST, SECOND], ["p1", "p2"])
    assert (agreement.value, agreement.low, agreement.high) == (1.0, None, None)
    assert (kappa_ci.value, kappa_ci.low, kappa_ci.high) == (1.0, None, None)
    n = MIN_FOR_INTERVAL
    predicted = [FIRST, SECOND] * n
    reference = [FIRST, SECOND] * (n - 1) + [SECOND, FIRST]
    agreement, kappa_ci = agreement_and_kappa(predicted, reference, [f"p{i}" for i in range(2 * n)])
    assert agreement.low is not None
    assert kappa_ci.low < kappa_ci.value < kappa_ci.high


def test_a_judge_whose_kappa_rests_on_too_few_prompts_sorts_after_judges_with_an_interval():
    judges = [JudgeInfo("person", "person", PERSON), JudgeInfo("few", "few", MODEL), JudgeInfo("many", "many", MODEL)]
    pairs, labels, settled = {}, {"person": [], "few": [], "many": []}, {}
    rng = random.Random(3)
    for i in range(40):
        item = ("overall", i)
        pairs[item] = Pair(f"prompt-{i}", 10, 20)
        truth = FIRST if rng.random() < 0.5 else SECOND
        settled[item] = DebateReference(truth, CONSENSUS)
        labels["many"].append(
            Label("many", item, truth if rng.random() < 0.8 else (SECOND if truth == FIRST else FIRST))
        )
        if i < 3:
            labels["few"].append(Label("few", item, truth))  # perfect on 3 pairs
    report = build_report(judges, labels, pairs, settled, resamples=100)
    order = [r.judge.id for r in report.judges]
    assert order == ["many", "few"]
    few = report.find("few")
    assert few.kappa.value == 1.0
    assert few.kappa.low is None
    assert few.n == 3


def test_the_length_slope_interval_is_statsmodels_logit_wald_interval():
    from evalhub.core.judge_lab.measures import length_slope_interval

    rng = np.random.default_rng(5)
    difference = rng.normal(0, 300, 400)
    picked_first = (rng.random(400) < 1 / (1 + np.exp(-difference / 300))).astype(float)
    interval = length_slope_interval(difference, picked_first, 1 - picked_first)
    x = difference / difference.std(ddof=1)
    fitted = sm.Logit(picked_first, sm.add_constant(x)).fit(disp=0)
    low, high = fitted.conf_int()[1]
    assert interval.value == pytest.approx(fitted.params[1], rel=1e-6)
    assert interval.low == pytest.approx(low, rel=1e-5)
    assert interval.high == pytest.approx(high, rel=1e-5)
    few = length_slope_interval(difference[:6], picked_first[:6], 1 - picked_first[:6])
    assert few.low is None


def test_the_self_preference_excess_interval_is_newcombes_as_statsmodels_computes_it():
    from statsmodels.stats.proportion import confint_proportions_2indep

    from evalhub.core.judge_lab.measures import difference_of_rates

    interval = difference_of_rates(30, 40, 50, 100)
    low, high = confint_proportions_2indep(30, 40, 50, 100, method="newcomb", compare="diff")
    assert interval.value == pytest.approx(0.75 - 0.5)
    assert interval.low == pytest.approx(low, abs=1e-9)
    assert interval.high == pytest.approx(high, abs=1e-9)
    assert difference_of_rates(3, 4, 50, 100).low is None


@pytest.mark.parametrize("patterns_per_draw", [4096, 2])
def test_poisson_sums_drawn_per_distinct_row_have_the_per_prompt_bootstraps_moments(monkeypatch, patterns_per_draw):
    """Prompts with the same row are drawn together (one Poisson(g) count for g of them, a block of
    distinct rows at a time). Counting each prompt Poisson(1) times, a resample's sum has mean Σ x and
    covariance Σ x xᵀ: the grouped draws have them too, and equal a draw per prompt's."""
    from evalhub.core.judge_lab import measures

    monkeypatch.setattr(measures, "PATTERNS_PER_DRAW", patterns_per_draw)
    rng = np.random.default_rng(5)
    rows = rng.integers(0, 3, size=(400, 4)) * (rng.random((400, 4)) < 0.3)  # few distinct rows
    assert len(np.unique(rows, axis=0)) < 100
    grouped = measures.poisson_resampled_sums(rows, resamples=20_000, seed=1)
    per_prompt = rng.poisson(1.0, size=(20_000, len(rows))) @ rows
    for sums in (grouped, per_prompt):
        assert sums.mean(axis=0) == pytest.approx(rows.sum(axis=0), rel=0.02)
        # Each estimated from 20,000 resamples: about 1.4 of standard error on entries near 35, 2 near 190.
        assert np.cov(sums.T) == pytest.approx(rows.T @ rows, abs=6.0)
    seeded = measures.poisson_resampled_sums(rows, 50, seed=1)
    assert np.array_equal(seeded, measures.poisson_resampled_sums(rows, 50, seed=1))


def test_distinct_rows_of_counts_are_numpys_distinct_rows():
    from evalhub.core.judge_lab.measures import _distinct_rows

    rng = np.random.default_rng(8)
    counts = rng.integers(0, 4, size=(500, 12)) * (rng.random((500, 12)) < 0.2)
    shares = counts / 3  # not integers: numpy's own way
    for rows in (counts.astype(float), shares):
        patterns, multiplicity = _distinct_rows(rows)
        expected, expected_counts = np.unique(rows, axis=0, return_counts=True)
        assert np.array_equal(patterns, expected) and np.array_equal(multiplicity, expected_counts)


def _multinomial_agreement_interval(hits: np.ndarray, clusters: np.ndarray, rng) -> tuple[float, float]:
    """The ordinary cluster bootstrap (draw as many prompts as there are, with replacement)."""
    per = np.stack([np.bincount(clusters, hits), np.bincount(clusters)], axis=1)
    drawn = rng.integers(0, len(per), size=(1000, len(per)))
    sums = per[drawn].sum(axis=1)
    return tuple(np.percentile(sums[:, 0] / sums[:, 1], [2.5, 97.5]))


def test_the_poisson_bootstrap_covers_as_often_as_the_multinomial_one():
    """300 simulated judges on 60 prompts of 1 to 5 pairs each, agreeing with people with probability
    0.7 on each pair (prompts' pairs correlated: a prompt's own rate varies): the Poisson intervals
    and the ordinary cluster bootstrap's cover the true agreement about as often, near 95 %."""
    rng = np.random.default_rng(11)
    truth, covered = 0.7, {"poisson": 0, "multinomial": 0}
    # The population's agreement: a prompt's rate clipped to [0, 1] (prompt sizes do not depend on it).
    expected = float(np.clip(truth + np.random.default_rng(0).normal(0, 0.15, size=2_000_000), 0, 1).mean())
    trials = 300
    for trial in range(trials):
        sizes = rng.integers(1, 6, size=60)
        rates = np.clip(truth + rng.normal(0, 0.15, size=60), 0, 1)
        clusters = np.repeat(np.arange(60), sizes)
        hits = rng.random(len(clusters)) < rates[clusters]
        predicted = np.where(hits, FIRST, SECOND)
        agreement, _ = agreement_and_kappa(predicted, np.full(len(hits), FIRST), clusters, seed=trial)
        covered["poisson"] += agreement.low <= expected <= agreement.high
        low, high = _multinomial_agreement_interval(hits.astype(float), clusters, rng)
        covered["multinomial"] += low <= expected <= high
    poisson, multinomial = covered["poisson"] / trials, covered["multinomial"] / trials
    assert 0.90 <= poisson <= 0.99 and 0.90 <= multinomial <= 0.99, covered
    assert abs(poisson - multinomial) <= 0.03, covered
