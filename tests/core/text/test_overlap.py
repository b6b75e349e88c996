"""ROUGE-L and BLEU as GEM's Appendix D.1 computes them: NLTK's tokens, and values equal to the libraries'
own functions (Google's rouge_score, NLTK's sentence BLEU) on them."""

from __future__ import annotations

import math
import random

import pytest
from nltk.tokenize import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktSentenceTokenizer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge_score import rouge_scorer

from evalhub.core.text.overlap import bleu, lcs_length, rouge_l, tokens

WORDS = (
    "The paper's method isn't new , results ( Table 2 ) are weak . However the ablation helps ; Fig. 3 shows it !"
).split()


def review(rng: random.Random, length: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(length)).replace(" .", ".").replace(" ,", ",")


def nltk_tokens(text: str) -> list[str]:
    """NLTK's word tokens of NLTK's sentences, built here from NLTK alone (not from evalhub's tokens)."""
    return [
        word for sentence in PunktSentenceTokenizer().tokenize(text) for word in NLTKWordTokenizer().tokenize(sentence)
    ]


class NltkTokens:
    """rouge_score takes a tokenizer object."""

    def tokenize(self, text: str) -> list[str]:
        return nltk_tokens(text)


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


def test_tokens_are_nltks_word_tokens_sentence_by_sentence():
    """Contractions, possessives and sentence-final stops split as NLTK splits them; case kept."""
    text = "The paper's results aren't convincing. However, Table 2 helps."
    assert tokens(text) == [
        *NLTKWordTokenizer().tokenize("The paper's results aren't convincing."),
        *NLTKWordTokenizer().tokenize("However, Table 2 helps."),
    ]
    assert tokens(text)[:8] == ["The", "paper", "'s", "results", "are", "n't", "convincing", "."]


@pytest.mark.parametrize("seed", range(5))
def test_rouge_l_equals_rouge_score_on_nltks_tokens(seed):
    rng = random.Random(seed)
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=NltkTokens())
    for _ in range(40):
        candidate, reference = review(rng, rng.randint(1, 120)), review(rng, rng.randint(1, 120))
        expected = scorer.score(reference, candidate)["rougeL"].fmeasure  # score(target, prediction)
        assert rouge_l(candidate, reference) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_bleu_equals_nltks_sentence_bleu_with_smoothing_method_1(seed):
    rng = random.Random(seed)
    smoothing = SmoothingFunction().method1
    for _ in range(40):
        candidate, reference = review(rng, rng.randint(4, 120)), review(rng, rng.randint(4, 120))
        expected = sentence_bleu([nltk_tokens(reference)], nltk_tokens(candidate), smoothing_function=smoothing)
        assert bleu(candidate, reference) == pytest.approx(expected, abs=1e-12)


def test_rouge_l_is_the_lcs_f1():
    # LCS("the cat sat on the mat", "the cat on the mat") = 5: P = 5/6, R = 1 → F = 10/11.
    assert rouge_l("the cat sat on the mat", "the cat on the mat") == pytest.approx(10 / 11)
    assert rouge_l("a b", "c d") == 0.0
    assert rouge_l("", "c d") == 0.0


def test_bleu_matches_a_hand_computation_with_smoothing():
    # 1-grams 5/6, 2-grams 3/5, 3-grams 1/4, 4-grams 0/3 → 0.1/3; no brevity penalty (6 > 5).
    expected = math.exp((math.log(5 / 6) + math.log(3 / 5) + math.log(1 / 4) + math.log(0.1 / 3)) / 4)
    assert bleu("the cat sat on the mat", "the cat on the mat") == pytest.approx(expected)
    assert bleu("the cat on the mat", "the cat on the mat") == pytest.approx(1.0)
    assert bleu("", "the cat") == 0.0
