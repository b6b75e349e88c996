"""A judge's own probability for its verdict, read from the log-probabilities of its answer's tokens.

AlpacaEval's annotators read a preference from the judge's token probabilities rather than its single
sampled answer (Dubois et al. 2024); here the same for ScaleEval's verdict format, whose answer ends
with the verdict alone on its last line ("1": the submission shown first is better, "2": the second,
"0": neither). The verdict's token is the last token of the answer whose text, stripped, is the digit
the answer's last line gives; its top alternatives hold the probability of each verdict. The mass on
"1", "2" and "0" is renormalised over those three (alternatives that are no verdict, such as " 1." or
"Sub", are dropped: the question is which verdict, given that one is given).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

VERDICT_DIGITS = ("1", "2", "0")  # first better, second better, neither


@dataclass(frozen=True)
class TokenLogprobs:
    """One token of an answer, its log-probability and its top alternatives (token, log-probability)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class VerdictProbabilities:
    first: float  # the submission shown first is better
    second: float
    tie: float

    @property
    def first_share(self) -> float:
        """The probability for the response shown first, a tie counting half (as a vote share does)."""
        return self.first + 0.5 * self.tie

    def as_dict(self) -> dict[str, float]:
        return {"first": self.first, "second": self.second, "tie": self.tie}


def verdict_probabilities(tokens: Sequence[TokenLogprobs], verdict: int | None) -> VerdictProbabilities | None:
    """The three verdicts' probabilities at the verdict's token, or None where the answer holds no
    verdict, its token is not found, or its alternatives name no verdict."""
    if verdict is None:
        return None
    digit = str(verdict)
    for token in reversed(tokens):
        if token.token.strip() == digit:
            break
    else:
        return None
    mass = dict.fromkeys(VERDICT_DIGITS, 0.0)
    for text, logprob in token.top or ((token.token, token.logprob),):
        if (key := text.strip()) in mass and math.isfinite(logprob):
            mass[key] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0:
        return None
    return VerdictProbabilities(mass["1"] / total, mass["2"] / total, mass["0"] / total)
