"""Reference-overlap baselines for GEM's validation table, as GEM's Appendix D.1 computes them: "NLTK as
the tokenizer and existing library functions" for ROUGE-L and BLEU.

Tokens: NLTK's word tokenizer (the one `nltk.word_tokenize` applies) on the sentences NLTK's Punkt
splitter finds with its default parameters. `word_tokenize` itself loads Punkt's trained English model,
a download evalhub never makes at run time; the two differ only after abbreviations ("e.g.", "Fig."),
where the untrained splitter also ends a sentence. Case is kept, as NLTK gives it.

BLEU is NLTK's `sentence_bleu` (BLEU-4, uniform weights, brevity penalty) with NLTK's smoothing method 1
(a zero n-gram precision counts 0.1 matches). ROUGE-L is the LCS F-measure of Google's `rouge_score`
(β = 1); its LCS is computed here bit-parallel, because rouge_score's dynamic programme takes about 45 ms
for two 500-token reviews against about 1 ms here, on every pair of a GEM run. Tests hold both equal to
the libraries on NLTK's tokens.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import cache

from nltk.tokenize import NLTKWordTokenizer
from nltk.tokenize.punkt import PunktSentenceTokenizer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu


@cache
def _tokenizers() -> tuple[PunktSentenceTokenizer, NLTKWordTokenizer]:
    return PunktSentenceTokenizer(), NLTKWordTokenizer()


def tokens(text: str) -> list[str]:
    sentences, words = _tokenizers()
    return [token for sentence in sentences.tokenize(text) for token in words.tokenize(sentence)]


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence, bit-parallel over b (Allison–Dix/Hyyrö):
    O(len(a) · len(b) / word size), so long reviews cost about a millisecond."""
    if not a or not b:
        return 0
    match: dict[str, int] = {}
    for position, token in enumerate(b):
        match[token] = match.get(token, 0) | (1 << position)
    full = (1 << len(b)) - 1
    v = full
    for token in a:
        u = v & match.get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(b) - bin(v).count("1")


def rouge_l(candidate: str, reference: str) -> float:
    """rouge_score's ROUGE-L F-measure of `candidate` against `reference`, on NLTK's tokens."""
    c, r = tokens(candidate), tokens(reference)
    lcs = lcs_length(c, r)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(c), lcs / len(r)
    return 2 * precision * recall / (precision + recall)


_SMOOTHING = SmoothingFunction().method1


def bleu(candidate: str, reference: str) -> float:
    """NLTK's sentence BLEU-4 of `candidate` against `reference`, smoothed with method 1."""
    c, r = tokens(candidate), tokens(reference)
    if not c or not r:
        return 0.0
    with warnings.catch_warnings():  # NLTK warns of zero n-gram overlaps that the smoothing handles
        warnings.simplefilter("ignore")
        return float(sentence_bleu([r], c, smoothing_function=_SMOOTHING))


BASELINES: dict[str, tuple[str, Callable[[str, str], float]]] = {
    "rouge-l": ("ROUGE-L", rouge_l),
    "bleu": ("BLEU", bleu),
}
