"""GEM pairs, PMI and the GRE-bench aggregates, against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evalhub.core.gem.logprob_requests import ScoreRequest, ScoreResult
from evalhub.core.gem.pairs import (
    GemPair,
    PairScore,
    bootstrap_ci,
    group_estimates,
    mean_ci,
    mean_difference,
    response_scores,
    score_pairs,
    standardized_mean_difference,
    task_pairs,
)
from evalhub.core.gem.prompts import prediction_messages
from evalhub.llm.scoring.reference import score_one_at_a_time
from evalhub.llm.scoring.transformers_scorer import TransformersScorer

REVIEWS = {
    "a": "The reviewer appreciates the clear writing.\nThe reviewer criticizes the missing ablations.",
    "b": "The reviewer questions whether the method scales to longer contexts.",
    "c": "The reviewer suggests comparing against stronger retrieval baselines.\nThe reviewer appreciates the writing.",
}


class CountingScorer:
    """Records every request it is asked to score; the score is a function of the request alone."""

    def __init__(self) -> None:
        self.requests: list[ScoreRequest] = []

    def score_detailed(self, requests):
        self.requests += requests
        return [
            ScoreResult(logprob=-float(len(r.answer) + 7 * len(r.prefix[-1]["content"])), tokens=3) for r in requests
        ]


def test_pmi_equals_an_independent_unbatched_computation(tiny_model, tiny_tokenizer):
    pairs = task_pairs(REVIEWS, REVIEWS) + task_pairs(
        {"d": REVIEWS["a"]}, {"e": REVIEWS["b"], "f": REVIEWS["c"]}, synopsis="We propose a new attention mechanism."
    )
    scorer = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer, max_batch_tokens=300)
    scores = score_pairs(scorer, pairs)

    # Independently: the C.2 prompt written out by hand for each pair, one forward per sequence.
    conditional = score_one_at_a_time(
        tiny_model,
        tiny_tokenizer,
        [ScoreRequest.of(prediction_messages(p.synopsis, p.candidate_text), p.reference_text) for p in pairs],
    )
    marginal = score_one_at_a_time(
        tiny_model,
        tiny_tokenizer,
        [ScoreRequest.of(prediction_messages(p.synopsis, "Not Available"), p.reference_text) for p in pairs],
    )
    expected = [c - m for c, m in zip(conditional, marginal, strict=True)]
    assert [s.pmi for s in scores] == pytest.approx(expected, abs=1e-4)
    assert len({round(s.pmi, 6) for s in scores}) > 3, "different pairs get different PMIs"


def test_each_marginal_is_scored_once_however_many_candidates_use_it():
    scorer = CountingScorer()
    pairs = task_pairs(REVIEWS, REVIEWS) + task_pairs(REVIEWS, REVIEWS, synopsis="An abstract.")
    score_pairs(scorer, pairs)
    marginals = [r for r in scorer.requests if r.prefix[-1]["content"].endswith("Not Available")]
    # 3 references × 2 synopses, not one per pair (12 pairs).
    assert len(pairs) == 12
    assert len(marginals) == 6
    assert len(scorer.requests) == 12 + 6, "every conditional once, every marginal once"


def test_pmi_is_the_conditional_minus_the_marginal_of_the_same_reference():
    scores = score_pairs(CountingScorer(), task_pairs(REVIEWS, REVIEWS))
    for score in scores:
        marginal_prompt = prediction_messages(None, None)[-1]["content"]
        expected_marginal = -float(len(score.pair.reference_text) + 7 * len(marginal_prompt))
        assert score.marginal == expected_marginal
        assert score.pmi == score.conditional - score.marginal


def test_a_response_is_never_paired_with_itself_nor_with_what_it_was_derived_from():
    pairs = task_pairs({**REVIEWS, "a-degraded": "x"}, REVIEWS, excluded={"a-degraded": ["a"]})
    keys = {(p.candidate, p.reference) for p in pairs}
    assert not any(c == r for c, r in keys)
    assert ("a-degraded", "a") not in keys
    assert {("a-degraded", "b"), ("a-degraded", "c")} <= keys
    assert len(pairs) == 3 * 2 + 2


def test_a_responses_score_is_the_mean_pmi_over_its_references():
    scores = [
        PairScore(GemPair("x", "y", "", ""), conditional=-1.0, marginal=-2.0, tokens=1),  # PMI 1
        PairScore(GemPair("x", "z", "", ""), conditional=0.0, marginal=-4.0, tokens=1),  # PMI 4
        PairScore(GemPair("w", "y", "", ""), conditional=-5.0, marginal=-3.0, tokens=1),  # PMI −2
    ]
    assert response_scores(scores) == {"x": 2.5, "w": -2.0}


def test_the_90_percent_interval_is_mean_plus_minus_1_645_standard_errors():
    estimate = mean_ci([1.0, 2.0, 3.0, 4.0])
    sd = math.sqrt(((1.5**2) * 2 + (0.5**2) * 2) / 3)  # 1.2910
    se = sd / 2
    assert estimate.mean == 2.5
    assert estimate.se == pytest.approx(se)
    assert (estimate.low, estimate.high) == pytest.approx((2.5 - 1.645 * se, 2.5 + 1.645 * se))
    assert estimate.se == pytest.approx(stats.sem([1, 2, 3, 4]))


def test_one_response_has_a_mean_but_no_interval():
    estimate = mean_ci([3.0])
    assert estimate.mean == 3.0
    assert math.isnan(estimate.low)
    assert estimate.as_dict()["low"] is None


def test_model_estimates_group_response_scores_by_model():
    estimates = group_estimates({"r1": 1.0, "r2": 3.0, "r3": 10.0}, {"r1": "m", "r2": "m", "r3": "h"})
    assert estimates["m"].mean == 2.0
    assert estimates["m"].n == 2
    assert estimates["h"].n == 1


def test_the_bootstrap_interval_agrees_with_scipys_percentile_bootstrap():
    values = np.random.default_rng(4).normal(5, 2, size=60)
    ours = bootstrap_ci(values.tolist(), level=0.90, resamples=20000, seed=1)
    theirs = stats.bootstrap(
        (values,), np.mean, confidence_level=0.90, n_resamples=20000, method="percentile", random_state=2
    ).confidence_interval
    assert ours.low == pytest.approx(theirs.low, abs=0.05)
    assert ours.high == pytest.approx(theirs.high, abs=0.05)
    assert ours.low < values.mean() < ours.high


def test_the_standardised_mean_difference_matches_a_hand_computation():
    before, after = [1, 2, 3, 4, 5], [0, 2, 2, 3, 4]
    # μ = 3, μ′ = 2.2, σ² = 2.5, σ′² = 2.2 → d = −0.8 / √2.35
    assert standardized_mean_difference(before, after) == pytest.approx(-0.8 / math.sqrt(2.35))
    result = mean_difference(before, after)
    assert result.d == pytest.approx(-0.52187, abs=1e-5)
    assert result.p == pytest.approx(stats.ttest_rel(after, before).pvalue)
    assert (result.mean_before, result.mean_after) == (3.0, 2.2)


def test_the_smd_interval_agrees_with_scipys_paired_bootstrap_and_marks_significance():
    rng = np.random.default_rng(7)
    before = rng.normal(0, 1, size=80)
    after = before - 0.4 + rng.normal(0, 0.5, size=80)
    ours = mean_difference(before.tolist(), after.tolist(), resamples=20000, seed=3)

    def smd(b, a, axis=-1):
        pooled = np.sqrt((b.var(axis=axis, ddof=1) + a.var(axis=axis, ddof=1)) / 2)
        return (a.mean(axis=axis) - b.mean(axis=axis)) / pooled

    theirs = stats.bootstrap(
        (before, after), smd, paired=True, vectorized=True, n_resamples=20000, method="percentile", random_state=5
    ).confidence_interval
    assert ours.low == pytest.approx(theirs.low, abs=0.03)
    assert ours.high == pytest.approx(theirs.high, abs=0.03)
    assert ours.d < 0
    assert ours.significant
    assert ours.high < 0


def test_identical_scores_before_and_after_are_not_significant():
    result = mean_difference([1.0, 2.0, 3.0, 5.0], [1.0, 2.0, 3.0, 5.0])
    assert result.d == 0.0
    assert result.p == 1.0
    assert not result.significant


def test_unpaired_inputs_are_refused():
    with pytest.raises(ValueError, match="paired"):
        mean_difference([1.0, 2.0, 3.0], [1.0, 2.0])


def test_the_same_change_on_every_item_is_certain_and_no_change_is_not():
    assert mean_difference([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]).p == 0.0
    assert mean_difference([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]).p == 1.0
