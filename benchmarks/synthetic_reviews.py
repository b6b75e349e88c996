"""Generated GEM-shaped text for benchmarks when the real reviews are not at hand."""

from __future__ import annotations

import random

JUDGMENTS = ["appreciates", "criticizes", "questions", "suggests"]


def lexicon(size: int, seed: int) -> list[str]:
    """Pseudo-words, so that a trained tokenizer reaches a realistic vocabulary size."""
    rng = random.Random(seed)
    onsets, vowels, codas = (
        "b c d f g h k l m n p r s t v w z br cl dr gr pl st tr".split(),
        "aeiou",
        ["", "n", "r", "s", "t", "l"],
    )
    words = set()
    while len(words) < size:
        words.add(
            "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(rng.randint(1, 4)))
        )
    return sorted(words)


def review(rng: random.Random, words: list[str], lines: int) -> str:
    """GEM-preprocessed judgments: one 'The reviewer …' line each (GEM, Appendix C.1)."""
    return "\n".join(
        f"The reviewer {rng.choice(JUDGMENTS)} {' '.join(rng.choices(words, k=rng.randint(5, 12)))}."
        for _ in range(lines)
    )


def abstract(rng: random.Random, words: list[str]) -> str:
    return " ".join(rng.choices(words, k=rng.randint(150, 220))) + "."
