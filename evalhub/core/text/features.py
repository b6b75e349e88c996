"""Cheap, deterministic features of a response, for the offline heuristic judge."""

from __future__ import annotations

import math
import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?")
_REFUSALS = ("as a language model", "as an ai", "i'm not able to", "i am not able to", "i cannot help", "i can't help")


def words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def overlap_f1(candidate: str, reference: str) -> float:
    """Bag-of-words F1 between a candidate and a reference (0 when either is empty)."""
    cand, ref = Counter(words(candidate)), Counter(words(reference))
    common = sum((cand & ref).values())
    if not common:
        return 0.0
    precision, recall = common / sum(cand.values()), common / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def length_score(text: str, saturation_words: int = 150) -> float:
    """0..1, rising with the logarithm of the word count and flat past `saturation_words`."""
    count = len(words(text))
    return min(1.0, math.log1p(count) / math.log1p(saturation_words))


def structure_score(text: str) -> float:
    """0..1 from list items, paragraphs and code blocks."""
    items = len(re.findall(r"^\s*(?:[-*•]|\d+[.)])\s+", text, re.MULTILINE))
    paragraphs = len([block for block in re.split(r"\n\s*\n", text) if block.strip()])
    code = text.count("```") // 2
    return min(1.0, 0.15 * items + 0.1 * max(0, paragraphs - 1) + 0.3 * code)


def is_refusal(text: str) -> bool:
    lowered = text.lower()
    return any(phrase in lowered for phrase in _REFUSALS)


_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_VOWEL = re.compile(r"[aeiouy]", re.IGNORECASE)


def fluency_score(text: str) -> float:
    """0..1: the share of sentences that start with a capital and end with a stop, times the share
    of words that look like words (letters with a vowel, no letter three times in a row) — what
    typos, cut sentences and shuffled fragments lower."""
    sentences = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    tokens = _WORD.findall(text)
    if not sentences or not tokens:
        return 0.0
    formed = sum(s[0].isupper() and s[-1] in ".!?" for s in sentences) / len(sentences)
    wordlike = sum(
        t.isdigit() or (bool(_VOWEL.search(t)) and not re.search(r"(.)\1\1", t.lower())) for t in tokens
    ) / len(tokens)
    return float(formed * wordlike)


def order_score(text: str) -> float:
    """0..1: how far consecutive sentences share words with their neighbours (coherence); reordered
    or foreign sentences break the chain. 1 for a single sentence."""
    sentences = [set(words(s)) for s in _SENTENCE.findall(text) if words(s)]
    if len(sentences) < 2:
        return 1.0
    links = [len(a & b) / max(1, min(len(a), len(b))) for a, b in zip(sentences, sentences[1:], strict=False)]
    return min(1.0, 2 * sum(links) / len(links))


# Chatbot Arena's style features (its "style control" blog post): length, markdown headers, list
# items and bold spans of a response.
_HEADER = re.compile(r"^\s{0,3}#{1,6}\s+\S", re.MULTILINE)
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
STYLE_FEATURES = ("length", "headers", "lists", "bold")


def style_features(text: str) -> tuple[int, int, int, int]:
    """(characters, markdown headers, list items, bold spans), in STYLE_FEATURES order."""
    return len(text), len(_HEADER.findall(text)), len(_LIST_ITEM.findall(text)), len(_BOLD.findall(text))
