"""How far to trust a judge: agreement, calibration and biases, each with its interval.

Everything here works on `Label`s: one verdict of one judge (a model, a debate agent, the debate
panel, or a person) on one pair under one criterion. A pair has a fixed order ("canonical": its
first response is response 1), so verdicts from different screens compare; `first_shown` says
whether the judge saw response 1 first.

Definitions (each one the page, the export and `judge_report` use):
- a judge's verdict on a pair is the majority of its labels in the order it was first shown the
  pair (a tied majority is no verdict: it counts as a miss, as in ScaleEval's Eq. 2); labels in
  the other order measure position bias only;
- the reference is given by the caller per pair (people's labels where there are any, else the
  debate's consensus or adjudication); a person is measured against the others;
- intervals are 95 % percentile bootstraps over prompts (all pairs of a resampled prompt go
  together: pairs of one prompt are not independent), seeded, `BOOTSTRAP` resamples;
- position: on pairs the judge saw in both orders, the share whose verdict changes with the
  order (Wilson interval);
- length: lengths in words; the share of decisive verdicts that pick the longer response (on pairs
  of unequal length), and the slope of a logistic regression of "picked response 1" on the length
  difference (response 1 − response 2) standardised by its sample standard deviation;
- calibration: the judge's probability that response 1 is better against the reference on
  decisive references; ECE over 10 equal-width bins, Brier score, the reliability diagram;
- Krippendorff's α (nominal) among people, over pairs with at least two people's verdicts.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

FIRST, SECOND, TIE = 1, 2, 0
VERDICTS = (FIRST, SECOND, TIE)
NO_VERDICT = -1  # the judge answered, but no verdict could be read (or its samples tied)
BOOTSTRAP = 1000
SEED = 0
BINS = 10
MIN_SHARED = 5  # pairs two raters must share before their kappa says anything
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Label:
    judge: str
    item: Hashable  # the pair under one criterion
    pick: int  # FIRST, SECOND, TIE, or NO_VERDICT, in the pair's canonical order
    first_shown: bool = True  # the judge saw response 1 first
    probability: float | None = None  # the judge's P(response 1 is better)


@dataclass(frozen=True)
class Pair:
    cluster: Hashable  # the prompt
    length_1: int
    length_2: int
    model_1: str = ""
    model_2: str = ""


@dataclass(frozen=True)
class Interval:
    value: float | None
    low: float | None = None
    high: float | None = None

    def as_list(self) -> list[float | None]:
        return [self.low, self.high]


@dataclass
class JudgeVerdicts:
    """One judge's verdict per pair (in the order first shown) and, where asked, in the other order."""

    primary: dict[Hashable, int] = field(default_factory=dict)
    other_order: dict[Hashable, int] = field(default_factory=dict)
    probability: dict[Hashable, float] = field(default_factory=dict)


def majority(picks: Iterable[int]) -> int:
    counts = Counter(picks).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return NO_VERDICT
    return counts[0][0]


def verdicts_of(labels: Iterable[Label]) -> JudgeVerdicts:
    """Labels of one judge → its verdicts (see the module's definitions)."""
    first_order: dict[Hashable, bool] = {}
    same: dict[Hashable, list[int]] = defaultdict(list)
    other: dict[Hashable, list[int]] = defaultdict(list)
    probabilities: dict[Hashable, list[float]] = defaultdict(list)
    for label in labels:
        order = first_order.setdefault(label.item, label.first_shown)
        if label.first_shown == order:
            same[label.item].append(label.pick)
            if label.probability is not None:
                probabilities[label.item].append(label.probability)
        else:
            other[label.item].append(label.pick)
    out = JudgeVerdicts()
    out.primary = {item: picks[0] if len(picks) == 1 else majority(picks) for item, picks in same.items()}
    out.other_order = {item: picks[0] if len(picks) == 1 else majority(picks) for item, picks in other.items()}
    out.probability = {item: sum(values) / len(values) for item, values in probabilities.items()}
    return out


# --- agreement -----------------------------------------------------------------------------------

CONFUSION_ROWS = VERDICTS  # the reference
CONFUSION_COLUMNS = (*VERDICTS, NO_VERDICT)  # the judge


def confusion(predicted: Sequence[int], reference: Sequence[int]) -> list[list[int]]:
    """Rows: the reference (1, 2, 0); columns: the judge (1, 2, 0, no verdict)."""
    table = [[0] * len(CONFUSION_COLUMNS) for _ in CONFUSION_ROWS]
    for p, r in zip(predicted, reference, strict=True):
        table[CONFUSION_ROWS.index(r)][CONFUSION_COLUMNS.index(p)] += 1
    return table


def _kappa_of_tables(tables: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each (..., 3, 4) confusion table; NaN where undefined."""
    n = tables.sum(axis=(-2, -1))
    diagonal = tables[..., 0, 0] + tables[..., 1, 1] + tables[..., 2, 2]
    rows = tables.sum(axis=-1)  # (..., 3)
    columns = tables.sum(axis=-2)[..., :3]  # no reference row matches "no verdict"
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = diagonal / n
        expected = (rows * columns).sum(axis=-1) / (n * n)
        kappa = (observed - expected) / (1 - expected)
        # p_e = 1: both used one and the same category throughout; perfect agreement is kappa 1.
        kappa = np.where(np.isclose(expected, 1) & np.isclose(observed, 1), 1.0, kappa)
        return np.where(np.isclose(expected, 1) & ~np.isclose(observed, 1), np.nan, kappa)


def kappa(predicted: Sequence[int], reference: Sequence[int]) -> float | None:
    """Cohen's kappa of a judge's verdicts (NO_VERDICT its own category) against the reference."""
    if not predicted:
        return None
    value = float(_kappa_of_tables(np.array(confusion(predicted, reference), dtype=float)))
    return None if math.isnan(value) else value


def _resample_weights(clusters: int, resamples: int, seed: int) -> np.ndarray:
    """How often each cluster is drawn in each bootstrap resample: (resamples, clusters)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, clusters, size=(resamples, clusters))
    weights = np.zeros((resamples, clusters))
    np.add.at(weights, (np.arange(resamples)[:, None], draws), 1)
    return weights


def _percentiles(values: np.ndarray) -> tuple[float | None, float | None]:
    values = values[~np.isnan(values)]
    if not len(values):
        return None, None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def agreement_and_kappa(
    predicted: Sequence[int],
    reference: Sequence[int],
    clusters: Sequence[Hashable],
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> tuple[Interval, Interval]:
    """Agreement and kappa, each with a 95 % bootstrap interval over clusters (prompts), from one set
    of resampled confusion tables."""
    if not predicted:
        return Interval(None), Interval(None)
    index = {cluster: i for i, cluster in enumerate(dict.fromkeys(clusters))}
    per_cluster = np.zeros((len(index), len(CONFUSION_ROWS), len(CONFUSION_COLUMNS)))
    for p, r, c in zip(predicted, reference, clusters, strict=True):
        per_cluster[index[c], CONFUSION_ROWS.index(r), CONFUSION_COLUMNS.index(p)] += 1
    total = per_cluster.sum(axis=0)
    tables = np.tensordot(_resample_weights(len(index), resamples, seed), per_cluster, axes=1)
    hits = tables[:, 0, 0] + tables[:, 1, 1] + tables[:, 2, 2]
    agreement = Interval(
        float(total[0, 0] + total[1, 1] + total[2, 2]) / len(predicted), *_percentiles(hits / tables.sum(axis=(1, 2)))
    )
    value = float(_kappa_of_tables(total))
    if math.isnan(value):
        return agreement, Interval(None)
    return agreement, Interval(value, *_percentiles(_kappa_of_tables(tables)))


def wilson(hits: int, total: int) -> Interval:
    if not total:
        return Interval(None)
    p = hits / total
    centre = (p + Z95**2 / (2 * total)) / (1 + Z95**2 / total)
    half = Z95 * math.sqrt(p * (1 - p) / total + Z95**2 / (4 * total * total)) / (1 + Z95**2 / total)
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


# --- position and length ---------------------------------------------------------------------------


def position_flips(verdicts: JudgeVerdicts) -> tuple[int, int]:
    """(flips, pairs) over the pairs judged in both orders with a verdict in each."""
    both = [
        item
        for item in verdicts.other_order
        if verdicts.primary.get(item, NO_VERDICT) != NO_VERDICT and verdicts.other_order[item] != NO_VERDICT
    ]
    return sum(verdicts.primary[item] != verdicts.other_order[item] for item in both), len(both)


def longer_share(picks: Iterable[tuple[int, Pair]]) -> tuple[int, int]:
    """(verdicts that picked the longer response, decisive verdicts on pairs of unequal length)."""
    longer = total = 0
    for pick, pair in picks:
        if pick in (FIRST, SECOND) and pair.length_1 != pair.length_2:
            total += 1
            longer += (pick == FIRST) == (pair.length_1 > pair.length_2)
    return longer, total


def standardised(values: Sequence[float]) -> list[float] | None:
    """Values divided by their sample standard deviation (None when it is 0 or undefined)."""
    if len(values) < 2:
        return None
    sd = float(np.std(values, ddof=1))
    return None if sd == 0 else [v / sd for v in values]


def logistic_fit(x: Sequence[float], y: Sequence[int], iterations: int = 50) -> tuple[float, float] | None:
    """(intercept, slope) of the maximum-likelihood logistic regression of y on x, by Newton's method;
    None when it does not exist (one class only, or the classes are separated by x)."""
    if len(x) < 3 or len(set(y)) < 2:
        return None
    design = np.column_stack([np.ones(len(x)), np.asarray(x, dtype=float)])
    target = np.asarray(y, dtype=float)
    beta = np.zeros(2)
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(design @ beta)))
        gradient = design.T @ (target - p)
        hessian = design.T @ (design * (p * (1 - p))[:, None])
        try:
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            return None
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    if not np.all(np.isfinite(beta)) or np.max(np.abs(beta)) > 30:
        return None  # separated: the likelihood has no maximum, the slope runs off
    return float(beta[0]), float(beta[1])


def length_slope(picks: Iterable[tuple[int, Pair]]) -> float | None:
    """Slope of "picked response 1" on the standardised length difference, over decisive verdicts."""
    decisive = [(pick, pair) for pick, pair in picks if pick in (FIRST, SECOND)]
    x = standardised([pair.length_1 - pair.length_2 for _, pair in decisive])
    if x is None:
        return None
    fit = logistic_fit(x, [int(pick == FIRST) for pick, _ in decisive])
    return None if fit is None else fit[1]


# --- self-preference -----------------------------------------------------------------------------


def own_win_rate(picks: Iterable[tuple[int, Pair]], model: str) -> tuple[float, int]:
    """(sum of wins for `model`'s responses, ties counting half; verdicts) on pairs `model` is in."""
    wins = total = 0.0
    for pick, pair in picks:
        if pick == NO_VERDICT or model not in (pair.model_1, pair.model_2) or pair.model_1 == pair.model_2:
            continue
        own = FIRST if pair.model_1 == model else SECOND
        wins += 1.0 if pick == own else 0.5 if pick == TIE else 0.0
        total += 1
    return wins, int(total)


# --- calibration -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    n: int
    ece: float
    brier: float
    bins: list[dict[str, float | int | None]]  # the reliability diagram


def calibration(probabilities: Sequence[float], outcomes: Sequence[int], bins: int = BINS) -> Calibration | None:
    """ECE over `bins` equal-width bins (a probability of exactly 1 falls in the last), Brier score."""
    if not probabilities:
        return None
    p = np.asarray(probabilities, dtype=float)
    y = np.asarray(outcomes, dtype=float)
    index = np.minimum((p * bins).astype(int), bins - 1)
    table = []
    ece = 0.0
    for b in range(bins):
        members = index == b
        count = int(members.sum())
        mean_p = float(p[members].mean()) if count else None
        mean_y = float(y[members].mean()) if count else None
        if count:
            ece += count / len(p) * abs(mean_y - mean_p)
        table.append({"low": b / bins, "high": (b + 1) / bins, "n": count, "confidence": mean_p, "accuracy": mean_y})
    return Calibration(n=len(p), ece=float(ece), brier=float(np.mean((p - y) ** 2)), bins=table)


# --- agreement differences (privileged information) ------------------------------------------------


def paired_difference(
    hits_a: Sequence[bool],
    hits_b: Sequence[bool],
    clusters: Sequence[Hashable],
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> Interval:
    """Agreement of b minus agreement of a on the same pairs, with a paired bootstrap over clusters."""
    if not hits_a:
        return Interval(None)
    index = {cluster: i for i, cluster in enumerate(dict.fromkeys(clusters))}
    per_cluster = np.zeros((len(index), 3))
    for a, b, c in zip(hits_a, hits_b, clusters, strict=True):
        per_cluster[index[c]] += (a, b, 1)
    weights = _resample_weights(len(index), resamples, seed)
    sums = weights @ per_cluster
    with np.errstate(divide="ignore", invalid="ignore"):
        differences = (sums[:, 1] - sums[:, 0]) / sums[:, 2]
    low, high = _percentiles(differences)
    return Interval((sum(hits_b) - sum(hits_a)) / len(hits_a), low, high)


# --- among people ----------------------------------------------------------------------------------


def _coincidences(ratings: Sequence[Sequence[int]], categories: Sequence[int]) -> np.ndarray:
    """Per unit, its nominal coincidence matrix (units × categories × categories); units with fewer
    than two ratings add nothing (Krippendorff 2011, 'Computing Krippendorff's alpha')."""
    position = {c: i for i, c in enumerate(categories)}
    out = np.zeros((len(ratings), len(categories), len(categories)))
    for u, unit in enumerate(ratings):
        m = len(unit)
        if m < 2:
            continue
        counts = np.zeros(len(categories))
        for value in unit:
            counts[position[value]] += 1
        out[u] = (np.outer(counts, counts) - np.diag(counts)) / (m - 1)
    return out


def _alpha_of(coincidence: np.ndarray) -> np.ndarray:
    """Nominal alpha = 1 − D_o / D_e from (..., k, k) coincidence matrices; NaN where undefined."""
    n_c = coincidence.sum(axis=-1)
    n = n_c.sum(axis=-1)
    diagonal = np.trace(coincidence, axis1=-2, axis2=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = (n - diagonal) / n
        expected = (n * n - (n_c * n_c).sum(axis=-1)) / (n * (n - 1))
        return 1 - observed / expected


def krippendorff_alpha(ratings: Sequence[Sequence[int]], resamples: int = BOOTSTRAP, seed: int = SEED) -> Interval:
    """Nominal alpha of the units' ratings (each unit: the people's verdicts on one pair), with a 95 %
    bootstrap interval over units."""
    units = [list(unit) for unit in ratings if len(unit) >= 2]
    if not units:
        return Interval(None)
    categories = sorted({value for unit in units for value in unit})
    per_unit = _coincidences(units, categories)
    value = float(_alpha_of(per_unit.sum(axis=0)))
    if math.isnan(value):
        return Interval(None)
    weights = _resample_weights(len(units), resamples, seed)
    low, high = _percentiles(_alpha_of(np.tensordot(weights, per_unit, axes=1)))
    return Interval(value, low, high)


def pairwise_kappas(
    raters: Mapping[str, Mapping[Hashable, int]], minimum: int = MIN_SHARED
) -> dict[tuple[str, str], float]:
    """Cohen's kappa of every two raters on the pairs both gave a verdict on (at least `minimum`)."""
    names = sorted(raters)
    out = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared = [item for item in raters[a] if item in raters[b] and raters[b][item] != NO_VERDICT]
            shared = [item for item in shared if raters[a][item] != NO_VERDICT]
            if len(shared) < minimum:
                continue
            value = kappa([raters[a][i] for i in shared], [raters[b][i] for i in shared])
            if value is not None:
                out[(a, b)] = value
    return out


def as_good_as_a_person(
    judge: Mapping[Hashable, int],
    people: Mapping[str, Mapping[Hashable, int]],
    people_kappas: Mapping[tuple[str, str], float],
    minimum: int = MIN_SHARED,
) -> dict[str, float | int | None] | None:
    """The judge's mean kappa with each person against the people's mean kappa with each other, and
    the difference in units of the people's standard deviation (None with fewer than two values)."""
    with_people = []
    for verdicts in people.values():
        shared = [item for item in judge if item in verdicts and verdicts[item] != NO_VERDICT]
        if len(shared) < minimum:
            continue
        value = kappa([judge[i] for i in shared], [verdicts[i] for i in shared])
        if value is not None:
            with_people.append(value)
    if not with_people or not people_kappas:
        return None
    values = list(people_kappas.values())
    judge_mean, people_mean = float(np.mean(with_people)), float(np.mean(values))
    spread = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return {
        "judge_mean_kappa": judge_mean,
        "people": len(with_people),
        "people_mean_kappa": people_mean,
        "people_sd": spread if len(values) > 1 else None,
        "z": (judge_mean - people_mean) / spread if spread > 0 else None,
    }
