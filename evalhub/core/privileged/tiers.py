"""Per model and hint tier: accuracy or win rate with bootstrap intervals, and how well tiers separate models.

Privileged-information paper: Section 3.2 (accuracy against a known final answer, several
samples per problem, bootstrapped 95% intervals; "separability" = whether two candidates'
intervals come apart at a tier) and Table 3 (win rate against one anchor model, overall and
per number of hints, a tie counting half).

An observation is (model, tier, prompt, value) with value 1 (correct / win), 0.5 (tie) or 0.
Samples of one prompt are not independent, so the bootstrap resamples prompts, and every
model and tier is read off the same resampled prompts: the gap between two models is paired.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations

import numpy as np

OVERALL = "overall"


@dataclass(frozen=True)
class Cell:
    mean: float
    low: float
    high: float
    n: int  # observations
    prompts: int

    def as_dict(self) -> dict[str, float | int]:
        return {"mean": self.mean, "low": self.low, "high": self.high, "n": self.n, "prompts": self.prompts}


@dataclass(frozen=True)
class Gap:
    model_a: str
    model_b: str
    gap: float  # mean of a − mean of b
    low: float
    high: float

    @property
    def separated(self) -> bool:
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class Separability:
    tier: int
    gaps: list[Gap]

    @property
    def separated(self) -> int:
        return sum(g.separated for g in self.gaps)

    @property
    def widest(self) -> Gap | None:
        return max(self.gaps, key=lambda g: abs(g.gap), default=None)


@dataclass(frozen=True)
class TierTable:
    models: list[str]
    tiers: list[int]
    cells: dict[tuple[str, int | str], Cell]  # (model, tier) and (model, OVERALL)
    separability: list[Separability]


def tier_table(
    observations: Iterable[tuple[str, int, object, float]],
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> TierTable:
    """Mean value per (model, tier) and per model over all tiers, percentile intervals from a
    bootstrap over prompts, and per tier every pair of models' gap with its paired interval."""
    rows = list(observations)
    models = sorted({r[0] for r in rows})
    tiers = sorted({int(r[1]) for r in rows})
    prompts = sorted({r[2] for r in rows}, key=str)
    if not rows:
        return TierTable([], [], {}, [])
    columns: list[tuple[str, int | str]] = [(m, t) for m in models for t in tiers] + [(m, OVERALL) for m in models]
    column = {key: i for i, key in enumerate(columns)}
    prompt_index = {p: i for i, p in enumerate(prompts)}
    sums = np.zeros((len(prompts), len(columns)))
    counts = np.zeros((len(prompts), len(columns)))
    for model, tier, prompt, value in rows:
        p = prompt_index[prompt]
        for cell in ((model, int(tier)), (model, OVERALL)):
            sums[p, column[cell]] += value
            counts[p, column[cell]] += 1

    rng = np.random.default_rng(seed)
    # One multinomial draw per resample = how often each prompt is drawn when drawing P prompts with replacement.
    weights = rng.multinomial(len(prompts), np.full(len(prompts), 1 / len(prompts)), size=resamples)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (weights @ sums) / (weights @ counts)  # resamples × columns; NaN where a cell drew no prompt
    alpha = (1 - confidence) / 2
    total_sums, total_counts = sums.sum(axis=0), counts.sum(axis=0)

    cells: dict[tuple[str, int | str], Cell] = {}
    for key, i in column.items():
        if total_counts[i] == 0:
            continue
        low, high = np.nanquantile(boot[:, i], [alpha, 1 - alpha])
        cells[key] = Cell(
            float(total_sums[i] / total_counts[i]),
            float(low),
            float(high),
            int(total_counts[i]),
            int((counts[:, i] > 0).sum()),
        )

    separability = []
    for tier in tiers:
        gaps = []
        for a, b in combinations(models, 2):
            if (a, tier) not in cells or (b, tier) not in cells:
                continue
            difference = boot[:, column[(a, tier)]] - boot[:, column[(b, tier)]]
            low, high = np.nanquantile(difference, [alpha, 1 - alpha])
            gaps.append(Gap(a, b, cells[(a, tier)].mean - cells[(b, tier)].mean, float(low), float(high)))
        separability.append(Separability(tier, gaps))
    return TierTable(models, tiers, cells, separability)


def win_value(outcome: str) -> float:
    """A battle from the candidate's side: 'win' 1, 'tie' 0.5, 'loss' 0."""
    return {"win": 1.0, "tie": 0.5, "loss": 0.0}[outcome]


def tier_label(tier: int) -> str:
    return "No hint" if tier == 0 else f"{tier} hint{'s' if tier != 1 else ''}"
