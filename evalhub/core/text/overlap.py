"""Reference-overlap baselines for GEM's validation table (GEM, Appendix D.1): ROUGE-L and BLEU.

Tokens: lower-cased words and single punctuation marks. ROUGE-L is the LCS F1 (β = 1).
BLEU is sentence BLEU-4 with uniform weights, the brevity penalty, and zero n-gram matches
smoothed to 0.1 (the "add ε to the numerator" smoothing, NLTK's method 1).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence, bit-parallel over b (Allison–Dix/Hyyrö):
    O(len(a) · len(b) / word size), so long reviews cost milliseconds."""
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
    c, r = tokens(candidate), tokens(reference)
    lcs = lcs_length(c, r)
    if lcs == 0:
        return 0.0
    precision, recall = lcs / len(c), lcs / len(r)
    return 2 * precision * recall / (precision + recall)


def bleu(candidate: str, reference: str, max_n: int = 4, epsilon: float = 0.1) -> float:
    c, r = tokens(candidate), tokens(reference)
    if not c:
        return 0.0
    logs = []
    for n in range(1, max_n + 1):
        grams = Counter(tuple(c[i : i + n]) for i in range(len(c) - n + 1))
        ref = Counter(tuple(r[i : i + n]) for i in range(len(r) - n + 1))
        total = sum(grams.values())
        if total == 0:
            return 0.0  # the candidate is shorter than n tokens
        matched = sum(min(count, ref[gram]) for gram, count in grams.items())
        logs.append(math.log((matched or epsilon) / total))
    brevity = 1.0 if len(c) > len(r) else math.exp(1 - len(r) / len(c))
    return brevity * math.exp(sum(logs) / max_n)


BASELINES: dict[str, tuple[str, Callable[[str, str], float]]] = {
    "rouge-l": ("ROUGE-L", rouge_l),
    "bleu": ("BLEU", bleu),
}
