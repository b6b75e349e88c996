"""Pointwise judges against people: correlations equal scipy's, alpha equals the krippendorff package,
and planted judges are recovered within their intervals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr

from evalhub.core.statistics.pointwise import (
    Score,
    ScoresError,
    correlations,
    krippendorff_alpha,
    meta_evaluation,
    read_scores,
)


def survey(seed: int, prompts: int = 40, systems: int = 6, people: int = 3, noise: float = 0.3):
    """Systems of spread quality answering prompts; people score 1–5 (rounded, so ties abound); a good
    judge is people's truth plus `noise`; a metric ignores quality."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(1.5, 4.5, systems)
    scores = []
    for p in range(prompts):
        truth = quality + rng.normal(0, 0.7, systems)
        for s in range(systems):
            for person in range(people):
                rated = float(np.clip(np.round(truth[s] + rng.normal(0, 0.5)), 1, 5))
                scores.append(Score(p, f"sys{s}", f"person{person}", True, rated))
            scores.append(Score(p, f"sys{s}", "good-judge", False, float(truth[s] + rng.normal(0, noise))))
            scores.append(Score(p, f"sys{s}", "length-metric", False, float(rng.uniform(0, 1))))
    return scores


def tables(scores, rater):
    out: dict = {}
    for s in scores:
        if s.rater == rater:
            out.setdefault(s.prompt, {})[s.system] = s.score
    return out


def people_mean(scores):
    cells: dict = {}
    for s in scores:
        if s.person:
            cells.setdefault(s.prompt, {}).setdefault(s.system, []).append(s.score)
    return {p: {system: float(np.mean(v)) for system, v in row.items()} for p, row in cells.items()}


def test_item_and_system_level_correlations_equal_scipy_on_the_same_data_ties_included():
    scores = survey(1, prompts=12)
    judge, people = tables(scores, "good-judge"), people_mean(scores)
    found = correlations(judge, people, resamples=50)
    systems = sorted(people[0])
    per_prompt = [spearmanr([judge[p][s] for s in systems], [people[p][s] for s in systems])[0] for p in range(12)]
    assert found["item_spearman"].value == pytest.approx(np.mean(per_prompt), abs=1e-12)
    per_prompt_tau = [kendalltau([judge[p][s] for s in systems], [people[p][s] for s in systems])[0] for p in range(12)]
    assert found["item_kendall"].value == pytest.approx(np.mean(per_prompt_tau), abs=1e-12)
    judge_means = [np.mean([judge[p][s] for p in range(12)]) for s in systems]
    people_means = [np.mean([people[p][s] for p in range(12)]) for s in systems]
    assert found["system_spearman"].value == pytest.approx(spearmanr(judge_means, people_means)[0], abs=1e-12)
    assert found["system_kendall"].value == pytest.approx(kendalltau(judge_means, people_means)[0], abs=1e-12)


def test_a_prompt_where_one_side_scores_every_system_alike_has_no_correlation_and_is_counted_out():
    judge = {p: {"a": 1.0, "b": 2.0, "c": 3.0} for p in range(3)}
    people = {0: {"a": 1.0, "b": 2.0, "c": 3.0}, 1: {"a": 2.0, "b": 2.0, "c": 2.0}, 2: {"a": 3.0, "b": 2.0, "c": 1.0}}
    found = correlations(judge, people, resamples=10)
    assert found["item_spearman"].value == pytest.approx(0.0)  # (1 + (−1)) / 2; prompt 1 left out
    assert found["prompts_without_item_correlation"] == 1


@pytest.mark.parametrize("metric", ["interval", "ordinal", "nominal"])
def test_alpha_equals_the_krippendorff_package_with_missing_ratings(metric):
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(2)
    truth = rng.integers(1, 6, 60)
    matrix = np.clip(truth + rng.integers(-1, 2, (4, 60)), 1, 5).astype(float)
    matrix[rng.uniform(size=matrix.shape) < 0.2] = np.nan  # raters who skipped a response
    units = [[v for v in matrix[:, u] if not np.isnan(v)] for u in range(60)]
    ours = krippendorff_alpha(units, metric, resamples=20)
    theirs = krippendorff.alpha(reliability_data=matrix, level_of_measurement=metric)
    assert ours.value == pytest.approx(theirs, abs=1e-12)


def test_a_planted_good_judge_and_a_metric_that_ignores_quality_are_recovered_within_their_intervals():
    report = meta_evaluation(survey(3), resamples=300)["criteria"]["overall"]
    good, metric = report["judges"]["good-judge"], report["judges"]["length-metric"]
    assert good["item_spearman"]["value"] > 0.6 and good["item_spearman"]["ci"][0] > 0.5
    low, high = metric["item_spearman"]["ci"]
    assert low < 0 < high, "a metric that ignores quality: item-level rho near 0, its interval covering 0"
    assert good["system_spearman"]["value"] > 0.9
    assert report["people"] == 3 and report["people_alpha"]["interval"]["value"] > 0.5
    # The good judge agrees with each person at least as well as people agree with each other.
    assert good["mean_item_spearman_with_each_person"] >= report["people_mean_item_spearman_with_each_other"] - 0.05


def test_intervals_widen_as_prompts_shrink_and_vanish_below_the_minimum():
    widths = []
    for prompts in (40, 12):
        found = meta_evaluation(survey(4, prompts=prompts), resamples=300)["criteria"]["overall"]
        low, high = found["judges"]["good-judge"]["item_spearman"]["ci"]
        widths.append(high - low)
    assert widths[1] > widths[0]
    few = meta_evaluation(survey(4, prompts=6), resamples=50)["criteria"]["overall"]["judges"]["good-judge"]
    assert few["item_spearman"]["value"] is not None and few["item_spearman"]["ci"] is None


BAD = "prompt_id,system,rater,rater_kind,score\n1,a,ann,person,4\n1,b,ann,robot,3\n,c,ann,person,2\n1,d,x,judge,no\n"


def test_the_scores_file_names_every_bad_line():
    with pytest.raises(ScoresError) as refused:
        read_scores(BAD)
    assert [e.split(":")[0] for e in refused.value.errors] == ["line 3", "line 4", "line 5"]


def test_a_system_level_figure_counts_its_systems_and_draws_no_interval_over_too_few():
    from evalhub.core.statistics.pointwise import MIN_SYSTEMS

    for systems, interval in ((3, False), (MIN_SYSTEMS - 1, False), (MIN_SYSTEMS, True)):
        scores = survey(1, prompts=12, systems=systems)  # many prompts, however few systems
        found = correlations(tables(scores, "good-judge"), people_mean(scores), resamples=50)
        system = found["system_spearman"]
        assert (system.n, system.unit) == (systems, "systems") and system.value is not None
        assert (system.low is not None) == interval, systems
        assert found["item_spearman"].n == 12 and found["item_spearman"].low is not None
