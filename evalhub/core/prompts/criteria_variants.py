"""Criteria prompt variants for robustness checks (ScaleEval, Section 5.3 and Appendix A.2, Table 8).

Each variant rewrites the level descriptions; the scores and their order stay as they are. The
paper's variants show the level lines only (Appendix A.2), so a variant's criteria section drops the
criterion's name and definition: left in, they would tell the judge what the rewritten lines hide.
Random variants take a seed and give the same text for the same seed.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping

GIBBERISH_SYMBOLS = "!@#$%&*()<>?/+=€"
_LABEL = re.compile(r"^[^-–—]{1,40}\s[-–—]\s")  # "Not Helpful - " / "Mastery - "
_WORD = re.compile(r"^(\W*)(.*?)(\W*)$")


def shortened(text: str, rng: random.Random) -> str:
    """Drop the level's label ("Not Helpful - …")."""
    return _LABEL.sub("", text, count=1)


def gibberish(text: str, rng: random.Random, rate: float = 0.3) -> str:
    """Replace about `rate` of the letters by symbols."""
    return "".join(rng.choice(GIBBERISH_SYMBOLS) if c.isalpha() and rng.random() < rate else c for c in text)


def shuffled(text: str, rng: random.Random) -> str:
    """The same words in a random order."""
    words = text.split()
    rng.shuffle(words)
    return " ".join(words)


def flipped(text: str, rng: random.Random) -> str:
    """Every word spelled backwards, punctuation around it kept in place."""

    def flip(word: str) -> str:
        match = _WORD.match(word)
        assert match is not None  # _WORD matches any string (every part may be empty)
        lead, core, trail = match.groups()
        return lead + core[::-1] + trail

    return " ".join(flip(word) for word in text.split(" "))


def masked(text: str, rng: random.Random, rate: float = 0.3) -> str:
    """Replace about `rate` of the letters by '_'."""
    return "".join("_" if c.isalpha() and rng.random() < rate else c for c in text)


VARIANTS: dict[str, Callable[[str, random.Random], str]] = {
    "shortened": shortened,
    "gibberish": gibberish,
    "shuffled": shuffled,
    "flipped": flipped,
    "masked": masked,
}
ORIGINAL = "original"


def criteria_variant(levels: Mapping[str, str], variant: str, seed: int = 0) -> dict[str, str]:
    """The levels rewritten by `variant` ("original" leaves them as they are)."""
    if variant == ORIGINAL:
        return dict(levels)
    if variant not in VARIANTS:
        raise ValueError(f"unknown criteria variant {variant!r}; choose from {ORIGINAL}, {', '.join(VARIANTS)}.")
    rng = random.Random(f"{variant}:{seed}")
    return {score: VARIANTS[variant](text, rng) for score, text in levels.items()}


def criteria_text(name: str, definition: str, levels: Mapping[str, str]) -> str:
    """A criterion as ScaleEval shows it: its definition, then one quoted line per level."""
    lines = [f"{name}: {definition}".strip().rstrip(":")] if definition else [name]
    lines += [f'"{score}": "{text}"' for score, text in levels.items()]
    return "\n".join(lines)


def criteria_section(name: str, definition: str, levels: Mapping[str, str], variant: str, seed: int = 0) -> str:
    """The criteria a judge sees: the original with its name and definition, or a variant's level
    lines alone (ScaleEval Appendix A.2)."""
    if variant == ORIGINAL:
        return criteria_text(name, definition, levels)
    return "\n".join(f'"{score}": "{text}"' for score, text in criteria_variant(levels, variant, seed).items())
