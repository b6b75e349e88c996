"""GEM: pairs, PMI from a log-probability scorer, and the aggregates GRE-bench reports.

GEM, Section 3: PMI(x; y | s) = log P(y | C.2(s, x)) − log P(y | C.2(s, "Not Available")),
both under the evaluation LM's chat template, summed over y's tokens and the end-of-turn
token. Section 4.1: a response's score is the mean PMI over the other references of its
task. Appendix A.2: a model's benchmark score is the mean over its responses (GRE-bench
reports ±1.645·SE, a 90% interval). Section 4.2 / Algorithm 1: the validation workflow's
standardised mean difference d = (μ′ − μ) / σ_pooled with σ_pooled = √((σ² + σ′²) / 2).

Pure Python (plus numpy/scipy); the scorer is anything with `score_detailed(requests)`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypedDict, TypeVar

from evalhub.core.gem.logprob_requests import ScoreRequest, ScoreResult
from evalhub.core.gem.prompts import prediction_messages

if TYPE_CHECKING:
    import numpy as np

G = TypeVar("G", bound=Hashable)  # what responses are grouped by: a model's id, usually
R = TypeVar("R", bound=Hashable)  # what names a response: its id, usually

Z_90 = 1.645  # GRE-bench's ±1.645·SE


@dataclass(frozen=True)
class GemPair:
    """One ordered pair on one task: does candidate x help predict reference y (given synopsis s)?"""

    candidate: Hashable
    reference: Hashable
    candidate_text: str
    reference_text: str
    synopsis: str | None = None

    def conditional_request(self) -> ScoreRequest:
        return ScoreRequest.of(prediction_messages(self.synopsis, self.candidate_text), self.reference_text)

    def marginal_request(self) -> ScoreRequest:
        # GEM, Appendix C.2: "Not Available" in place of the first reviewer's judgments.
        return ScoreRequest.of(prediction_messages(self.synopsis, None), self.reference_text)


@dataclass(frozen=True)
class PairScore:
    pair: GemPair
    conditional: float
    marginal: float
    tokens: int  # scored tokens of y (its tokens and the end of turn)

    @property
    def pmi(self) -> float:
        return self.conditional - self.marginal


def task_pairs(
    candidates: Mapping[Hashable, str],
    references: Mapping[Hashable, str],
    synopsis: str | None = None,
    excluded: Mapping[Hashable, Iterable[Hashable]] | None = None,
) -> list[GemPair]:
    """Every (candidate, other reference) pair of one task.

    A response is never scored against itself; `excluded` names further references a
    candidate must not meet (a degraded copy is not scored against its own original).
    """
    excluded = excluded or {}
    pairs = []
    for candidate, candidate_text in candidates.items():
        skip = {candidate, *excluded.get(candidate, ())}
        pairs += [
            GemPair(candidate, reference, candidate_text, reference_text, synopsis)
            for reference, reference_text in references.items()
            if reference not in skip
        ]
    return pairs


class DetailedScorer(Protocol):
    """What scoring needs of a log-probability scorer (evalhub.llm's implement it; core imports none)."""

    def score_detailed(self, requests: Sequence[ScoreRequest]) -> Sequence[ScoreResult]: ...


def score_pairs(scorer: DetailedScorer, pairs: Sequence[GemPair]) -> list[PairScore]:
    """PMI for every pair, with each marginal (y, s) scored once however many candidates use it.

    All requests go to the scorer in one call so it can batch across tasks and share each
    conditional prefix C.2(s, x) across all of x's references.
    """
    unique: dict[tuple[tuple[tuple[str, str], ...], str], int] = {}
    requests: list[ScoreRequest] = []

    def slot(request: ScoreRequest) -> int:
        key = (tuple((m["role"], m["content"]) for m in request.prefix), request.answer)
        if key not in unique:
            unique[key] = len(requests)
            requests.append(request)
        return unique[key]

    slots = [(slot(pair.conditional_request()), slot(pair.marginal_request())) for pair in pairs]
    results = scorer.score_detailed(requests) if requests else []
    assert len(results) == len(requests), "the scorer returns one result per request"
    return [
        PairScore(pair, results[c].logprob, results[m].logprob, results[c].tokens)
        for pair, (c, m) in zip(pairs, slots, strict=True)
    ]


def response_scores(scores: Iterable[PairScore]) -> dict[Hashable, float]:
    """GEM, Section 4.1: a response's score is the mean PMI over the references it was paired with."""
    by_candidate: dict[Hashable, list[float]] = defaultdict(list)
    for score in scores:
        by_candidate[score.pair.candidate].append(score.pmi)
    return {candidate: math.fsum(values) / len(values) for candidate, values in by_candidate.items()}


class EstimateDict(TypedDict):
    """An estimate as a table row holds it: NaN (fewer than two values) becomes None."""

    mean: float | None
    se: float | None
    low: float | None
    high: float | None
    n: int
    method: str


@dataclass(frozen=True)
class Estimate:
    """A mean with its standard error and an interval (NaN where n < 2 leaves it undefined)."""

    mean: float
    se: float
    low: float
    high: float
    n: int
    method: str = "normal"

    def as_dict(self) -> EstimateDict:
        def clean(value: float) -> float | None:
            return None if math.isnan(value) else value

        return {
            "mean": clean(self.mean),
            "se": clean(self.se),
            "low": clean(self.low),
            "high": clean(self.high),
            "n": self.n,
            "method": self.method,
        }


def mean_ci(values: Sequence[float], z: float = Z_90) -> Estimate:
    """Mean ± z·SE with SE = s / √n (sample standard deviation, n − 1)."""
    n = len(values)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0)
    mean = math.fsum(values) / n
    if n < 2:
        return Estimate(mean, math.nan, math.nan, math.nan, n)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    se = math.sqrt(variance / n)
    return Estimate(mean, se, mean - z * se, mean + z * se, n)


def bootstrap_ci(values: Sequence[float], level: float = 0.90, resamples: int = 2000, seed: int = 0) -> Estimate:
    """Percentile bootstrap interval of the mean (resampling responses with replacement)."""
    import numpy as np

    normal = mean_ci(values)
    if len(values) < 2:
        return Estimate(normal.mean, normal.se, math.nan, math.nan, normal.n, "bootstrap")
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return Estimate(normal.mean, float(means.std(ddof=1)), float(low), float(high), normal.n, "bootstrap")


def group_estimates(
    scores_by_response: Mapping[R, float],
    group_of: Mapping[R, G],
    *,
    bootstrap: bool = False,
    seed: int = 0,
) -> dict[G, Estimate]:
    """Per group (a model): the mean of its responses' scores with a 90% interval."""
    grouped: dict[G, list[float]] = defaultdict(list)
    for response, score in scores_by_response.items():
        grouped[group_of[response]].append(score)
    return {
        group: bootstrap_ci(values, seed=seed) if bootstrap else mean_ci(values) for group, values in grouped.items()
    }


@dataclass(frozen=True)
class MeanDifference:
    """Algorithm 1's statistics for one strategy: SMD with a 95% interval and a paired p-value."""

    d: float
    low: float
    high: float
    p: float
    n: int
    mean_before: float
    mean_after: float

    @property
    def significant(self) -> bool:
        return self.p < 0.05

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            key: (None if isinstance(value, float) and math.isnan(value) else value)
            for key, value in {
                "d": self.d,
                "low": self.low,
                "high": self.high,
                "p": self.p,
                "n": self.n,
                "mean_before": self.mean_before,
                "mean_after": self.mean_after,
            }.items()
        }


def standardized_mean_difference(before: Sequence[float] | np.ndarray, after: Sequence[float] | np.ndarray) -> float:
    """d = (μ′ − μ) / √((σ² + σ′²) / 2), sample standard deviations (GEM, Section 4.2)."""
    import numpy as np

    b, a = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    pooled = math.sqrt((b.var(ddof=1) + a.var(ddof=1)) / 2)
    return float((a.mean() - b.mean()) / pooled) if pooled > 0 else math.nan


def mean_difference(
    before: Sequence[float], after: Sequence[float], *, resamples: int = 2000, seed: int = 0
) -> MeanDifference:
    """SMD of paired scores s_i → s′_i, a 95% percentile-bootstrap interval over items (pairs
    resampled together, as the scores are paired), and the paired t-test's two-sided p."""
    import numpy as np
    from scipy import stats

    if len(before) != len(after):
        raise ValueError("before and after must be paired: one score each per item.")
    n = len(before)
    if n < 3:
        nan = math.nan
        return MeanDifference(nan, nan, nan, nan, n, *(float(np.mean(x)) if n else nan for x in (before, after)))
    b, a = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    d = standardized_mean_difference(b, a)
    rng = np.random.default_rng(seed)
    index = rng.integers(0, n, size=(resamples, n))
    rb, ra = b[index], a[index]
    pooled = np.sqrt((rb.var(axis=1, ddof=1) + ra.var(axis=1, ddof=1)) / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ds = (ra.mean(axis=1) - rb.mean(axis=1)) / pooled
    ds = ds[np.isfinite(ds)]
    low, high = (float(q) for q in np.quantile(ds, [0.025, 0.975])) if len(ds) else (math.nan, math.nan)
    differences = a - b
    if np.all(differences == differences[0]):
        # A constant shift: no spread to test against (scipy would warn and divide by zero). No
        # change at all is p = 1; the same nonzero change on every item is taken as certain, p = 0.
        p = 1.0 if differences[0] == 0 else 0.0
    else:
        p = float(stats.ttest_rel(a, b).pvalue)
    return MeanDifference(d, low, high, p, n, float(b.mean()), float(a.mean()))
