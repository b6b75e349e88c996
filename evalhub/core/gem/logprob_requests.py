"""What a log-probability scorer takes and returns: plain values, so the GEM maths in
evalhub.core builds requests without depending on model access (evalhub.llm implements them)."""

from __future__ import annotations

from dataclasses import dataclass, field

Message = dict[str, str]  # {"role": ..., "content": ...}


@dataclass(frozen=True)
class ScoreRequest:
    """log P(answer + end of turn | prefix), the answer forced as the assistant's turn."""

    prefix: tuple[Message, ...]
    answer: str

    @classmethod
    def of(cls, prefix: list[Message], answer: str) -> ScoreRequest:
        return cls(tuple(prefix), answer)


@dataclass(frozen=True)
class ScoreResult:
    logprob: float
    tokens: int  # scored tokens: the answer's and the end-of-turn token
    end_token_appended: bool = False


@dataclass(frozen=True)
class TokenDistribution:
    """Probabilities of candidate first tokens; `mass` is how much of the distribution they hold."""

    probabilities: dict[str, float]
    multi_token_candidates: list[str] = field(default_factory=list)  # scored by their first token only

    @property
    def mass(self) -> float:
        return sum(self.probabilities.values())

    def expected_score(self) -> float:
        """Σ k·p(k) / Σ p(k) over numeric candidates (G-Eval style probability-weighted score)."""
        numeric = {float(k): p for k, p in self.probabilities.items()}
        total = sum(numeric.values())
        return sum(k * p for k, p in numeric.items()) / total if total else float("nan")
