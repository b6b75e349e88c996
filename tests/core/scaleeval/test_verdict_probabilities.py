"""A judge's probability of its verdict, read at the verdict's token from its top log-probabilities."""

from __future__ import annotations

import math

import pytest

from evalhub.core.scaleeval.verdict_probabilities import TokenLogprobs, verdict_probabilities


def token(text: str, alternatives: dict[str, float]) -> TokenLogprobs:
    top = tuple((t, math.log(p)) for t, p in alternatives.items())
    return TokenLogprobs(text, top[0][1] if top else 0.0, top)


def test_the_three_verdicts_are_renormalised_over_the_verdict_digits_at_the_last_verdict_token():
    tokens = [
        token("Submission", {"Submission": 1.0}),
        token(" 2", {" 2": 0.9, " 1": 0.1}),  # a digit inside the reasoning: not the verdict's token
        token(" is", {" is": 1.0}),
        token(" better.", {" better.": 1.0}),
        token("\n1", {"\n1": 0.5, "\n2": 0.2, "1": 0.1, "\n0": 0.1, "\nSub": 0.1}),
    ]
    found = verdict_probabilities(tokens, 1)
    assert found is not None
    # "\n1" and "1" are the same verdict; "\nSub" is none, and is left out before renormalising.
    assert found.first == pytest.approx(0.6 / 0.9)
    assert found.second == pytest.approx(0.2 / 0.9)
    assert found.tie == pytest.approx(0.1 / 0.9)
    assert found.first_share == pytest.approx((0.6 + 0.05) / 0.9)


def test_no_verdict_or_no_verdict_token_gives_none():
    tokens = [token("\n1", {"\n1": 1.0})]
    assert verdict_probabilities(tokens, None) is None
    assert verdict_probabilities(tokens, 2) is None
    assert verdict_probabilities([token("\n1", {"x": 1.0})], 1) is None


def test_a_token_without_alternatives_counts_only_itself():
    assert verdict_probabilities([TokenLogprobs("2", 0.0)], 2).second == 1.0
