"""ROUGE-L and BLEU against hand computations and a plain dynamic-programming LCS."""

from __future__ import annotations

import math
import random

import pytest

from evalhub.core.text.overlap import bleu, lcs_length, rouge_l


def dp_lcs(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a, 1):
        for j, y in enumerate(b, 1):
            table[i][j] = table[i - 1][j - 1] + 1 if x == y else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


def test_the_bit_parallel_lcs_equals_the_textbook_dynamic_programme():
    rng = random.Random(3)
    for _ in range(300):
        a = rng.choices("abcde", k=rng.randint(0, 40))
        b = rng.choices("abcde", k=rng.randint(0, 90))
        assert lcs_length(a, b) == dp_lcs(a, b)


def test_rouge_l_is_the_lcs_f1():
    # LCS("the cat sat on the mat", "the cat on the mat") = 5: P = 5/6, R = 1 → F = 10/11.
    assert rouge_l("The cat sat on the mat", "the cat on the mat") == pytest.approx(10 / 11)
    assert rouge_l("a b", "c d") == 0.0
    assert rouge_l("same words here", "Same words here") == 1.0


def test_bleu_matches_a_hand_computation_with_smoothing():
    # 1-grams 5/6, 2-grams 3/5, 3-grams 1/4, 4-grams 0/3 → 0.1/3; no brevity penalty (6 > 5).
    expected = math.exp((math.log(5 / 6) + math.log(3 / 5) + math.log(1 / 4) + math.log(0.1 / 3)) / 4)
    assert bleu("the cat sat on the mat", "the cat on the mat") == pytest.approx(expected)
    assert bleu("the cat on the mat", "the cat on the mat") == pytest.approx(1.0)


def test_a_short_candidate_pays_the_brevity_penalty():
    reference = "one two three four five six seven eight"
    short = "one two three four five"
    # Every n-gram matches; BP = exp(1 − 8/5).
    assert bleu(short, reference) == pytest.approx(math.exp(1 - 8 / 5))
    assert bleu("one two", reference) == 0.0, "shorter than four tokens: no 4-grams"
