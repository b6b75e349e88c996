"""How far to trust a judge: agreement, calibration and biases, each with its interval.

Everything here works on `Label`s: one verdict of one judge (a model, a debate agent, the debate
panel, or a person) on one pair under one criterion. A pair has a fixed order ("canonical": its
first response is response 1), so verdicts from different screens compare; `first_shown` says
whether the judge saw response 1 first.

Definitions (each one the page, the export and `judge_report` use):
- a judge's verdict on a pair is the majority of its labels in the order it was first shown the
  pair (a tied majority is no verdict: it counts as a miss, as in ScaleEval's Eq. 2); labels in
  the other order measure position bias only;
- the reference (`judge_report._reference`): the people's adjudication of a debate, else the
  people's majority, else the debate's consensus; a person is measured against the others;
- intervals are 95 % percentile bootstraps over prompts (all pairs of a resampled prompt go
  together: pairs of one prompt are not independent), seeded, `BOOTSTRAP` resamples, each prompt
  counted a Poisson(1) number of times (`poisson_resampled_sums`);
- position: on pairs the judge saw in both orders, the share whose verdict changes with the
  order (Wilson interval);
- length: lengths in characters; the share of decisive verdicts that pick the longer response (on pairs
  of unequal length), and the slope of a logistic regression of "picked response 1" on the length
  difference (response 1 − response 2) standardised by its sample standard deviation;
- calibration: the judge's probability that response 1 is better against the reference on
  decisive references; ECE over 10 equal-width bins, Brier score, the reliability diagram;
- Krippendorff's α (nominal) among people, over pairs with at least two people's verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

FIRST, SECOND, TIE = 1, 2, 0
VERDICTS = (FIRST, SECOND, TIE)
NO_VERDICT = -1  # the judge answered, but no verdict could be read (or its samples tied)
BOOTSTRAP = 1000
SEED = 0
BINS = 10
MIN_SHARED = 5  # pairs two raters must share before their kappa says anything
# Fewer prompts (bootstrap clusters) than this and a bootstrap interval is degenerate (κ 1.000
# [1.00, 1.00] on 2 pairs): the figure is shown with its n and "too few for an interval".
MIN_FOR_INTERVAL = 10
Z95 = 1.959963984540054


class Label(NamedTuple):  # a NamedTuple: tens of thousands are made per report
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
    category: str = ""  # the prompt's category (the subsets of the privileged-information tables)
    # Markdown elements (headers, list items, bold spans: Chatbot Arena's style features) of each
    # response, read where a judge's formatting bias is measured; 0 elsewhere.
    formatting_1: int = 0
    formatting_2: int = 0


@dataclass(frozen=True)
class Interval:
    value: float | None
    low: float | None = None
    high: float | None = None

    def as_list(self) -> list[float | None]:
        return [self.low, self.high]


ABSENT = -9  # no verdict of this judge on this pair (NO_VERDICT is an answer without one)
TURNED = np.array([NO_VERDICT, TIE, SECOND, FIRST])  # a pick (+ 1) with the pair's responses swapped


class LabelArrays(NamedTuple):
    """A judge's labels as arrays; `rows` index the report's pairs. Tens of thousands of labels
    are read per report, and a Python object per label was most of a cold board's time."""

    rows: np.ndarray  # int
    picks: np.ndarray  # FIRST, SECOND, TIE or NO_VERDICT in the pair's canonical order
    first_shown: np.ndarray  # bool
    probability: np.ndarray  # float; NaN where the judge gave none

    @classmethod
    def of(cls, labels: Sequence[Label], row: Mapping[Hashable, int]) -> LabelArrays:
        return cls(
            np.array([row[label.item] for label in labels], dtype=int),
            np.array([label.pick for label in labels], dtype=int),
            np.array([label.first_shown for label in labels], dtype=bool),
            np.array([np.nan if label.probability is None else label.probability for label in labels], dtype=float),
        )

    def turned(self, flipped: np.ndarray) -> LabelArrays:
        """These labels on pairs whose two responses swap places where `flipped` (by row), swapped with them."""
        if not flipped.any() or not len(self.rows):
            return self
        turn = flipped[self.rows]
        return LabelArrays(
            self.rows,
            np.where(turn, TURNED[self.picks + 1], self.picks),
            self.first_shown != turn,
            np.where(turn, 1 - self.probability, self.probability),
        )

    @classmethod
    def concatenate(cls, parts: Sequence[LabelArrays]) -> LabelArrays:
        if len(parts) == 1:  # as it is: a copy of every imported judge's labels held 0.25 GiB at ten million
            return parts[0]
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in cls._fields))


@dataclass
class JudgeVerdicts:
    """One judge's verdict per pair, dense over the report's pairs (ABSENT where it gave none): in
    the order it was first shown the pair, in the other order, and its mean probability (NaN), each
    order half where it gave probabilities in both."""

    primary: np.ndarray
    other_order: np.ndarray
    probability: np.ndarray
    # Its first two answers on a pair in the order first shown (ABSENT where it gave fewer): the same pair
    # asked again, a new sample, for test–retest reliability.
    first_sample: np.ndarray | None = None
    second_sample: np.ndarray | None = None


def _first_two(rows: np.ndarray, picks: np.ndarray, pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, the first and the second of `picks` (rows sorted, stable: in the order given)."""
    first, second = np.full(pairs, ABSENT), np.full(pairs, ABSENT)
    if not len(rows):
        return first, second
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    first[rows[starts]] = picks[starts]
    again = starts[(starts + 1 < len(rows))]
    again = again[rows[np.minimum(again + 1, len(rows) - 1)] == rows[again]]
    second[rows[again]] = picks[again + 1]
    return first, second


_PICK_COLUMN = np.array([3, 2, 0, 1])  # NO_VERDICT, TIE, FIRST, SECOND (pick + 1) → column
_COLUMN_PICK = np.array([FIRST, SECOND, TIE, NO_VERDICT])


def _majorities(rows: np.ndarray, picks: np.ndarray, pairs: int) -> np.ndarray:
    """Per pair the most frequent pick; NO_VERDICT when the top is tied, ABSENT with none."""
    counts = np.bincount(rows * 4 + _PICK_COLUMN[picks + 1], minlength=pairs * 4).reshape(pairs, 4)
    ordered = np.sort(counts, axis=1)
    winner = _COLUMN_PICK[counts.argmax(axis=1)]
    return np.where(ordered[:, -1] == 0, ABSENT, np.where(ordered[:, -1] == ordered[:, -2], NO_VERDICT, winner))


def dense_verdicts(labels: LabelArrays, pairs: int) -> JudgeVerdicts:
    """A judge's labels → its verdicts (see the module's definitions), as arrays over `pairs` pairs."""
    order = np.argsort(labels.rows, kind="stable")  # stable: "first shown" is the first label given
    rows, picks = labels.rows[order], labels.picks[order]
    first_shown, probability = labels.first_shown[order], labels.probability[order]
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if len(rows) else np.array([], dtype=int)
    first_order = np.zeros(pairs, dtype=bool)
    first_order[rows[starts]] = first_shown[starts]
    same = first_shown == first_order[rows]
    # Its probability in each order it was shown, then the two orders half each where it gave one in
    # both, as agreement averaged over both orders weighs them: a judge asked both ways has said P(response
    # 1 better) twice, and either alone carries its position bias.
    means = []
    for order in (same, ~same):
        given = order & ~np.isnan(probability)
        totals = np.bincount(rows[given], weights=probability[given], minlength=pairs)
        counts = np.bincount(rows[given], minlength=pairs)
        with np.errstate(divide="ignore", invalid="ignore"):
            means.append(np.where(counts > 0, totals / counts, np.nan))
    first_sample, second_sample = _first_two(rows[same], picks[same], pairs)
    return JudgeVerdicts(
        first_sample=first_sample,
        second_sample=second_sample,
        primary=_majorities(rows[same], picks[same], pairs),
        other_order=_majorities(rows[~same], picks[~same], pairs),
        probability=np.where(
            np.isnan(means[1]), means[0], np.where(np.isnan(means[0]), means[1], (means[0] + means[1]) / 2)
        ),
    )


def verdicts_of(labels: Sequence[Label]) -> dict[str, dict[Hashable, float]]:
    """Labels of one judge → its verdicts keyed by pair: {"primary", "other_order", "probability"}."""
    items = list(dict.fromkeys(label.item for label in labels))
    verdicts = dense_verdicts(LabelArrays.of(labels, {item: i for i, item in enumerate(items)}), len(items))
    return {
        name: {item: value.item() for item, value in zip(items, getattr(verdicts, name), strict=True) if keep(value)}
        for name, keep in (
            ("primary", lambda v: v != ABSENT),
            ("other_order", lambda v: v != ABSENT),
            ("probability", lambda v: not np.isnan(v)),
        )
    }


# --- agreement -----------------------------------------------------------------------------------

CONFUSION_ROWS = VERDICTS  # the reference
CONFUSION_COLUMNS = (*VERDICTS, NO_VERDICT)  # the judge


def _codes(values: Sequence[int] | np.ndarray, order: Sequence[int]) -> np.ndarray:
    """Verdicts → their positions in `order` (the confusion table's rows or columns)."""
    lookup = np.full(4, -1)
    for position, verdict in enumerate(order):
        lookup[verdict + 1] = position  # NO_VERDICT (−1) is slot 0
    return np.asarray(lookup[np.asarray(values, dtype=int) + 1])


def confusion_tables(
    predicted: Sequence[int] | np.ndarray,
    reference: Sequence[int] | np.ndarray,
    groups: np.ndarray | None = None,
    count: int = 1,
) -> np.ndarray:
    """(count, 3, 4) confusion tables, one per group (all in group 0 by default)."""
    rows, columns = _codes(reference, CONFUSION_ROWS), _codes(predicted, CONFUSION_COLUMNS)
    cells = len(CONFUSION_ROWS) * len(CONFUSION_COLUMNS)
    keys = rows * len(CONFUSION_COLUMNS) + columns + (0 if groups is None else groups * cells)
    return np.bincount(keys, minlength=count * cells).reshape(count, len(CONFUSION_ROWS), len(CONFUSION_COLUMNS))


def confusion(predicted: Sequence[int], reference: Sequence[int]) -> list[list[int]]:
    """Rows: the reference (1, 2, 0); columns: the judge (1, 2, 0, no verdict)."""
    table: list[list[int]] = confusion_tables(predicted, reference)[0].tolist()
    return table


def kappa_of_tables(tables: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each (..., 3, 4) confusion table; NaN where undefined."""
    n = tables.sum(axis=(-2, -1))
    diagonal = tables[..., 0, 0] + tables[..., 1, 1] + tables[..., 2, 2]
    rows = tables.sum(axis=-1)  # (..., 3)
    columns = tables.sum(axis=-2)[..., :3]  # no reference row matches "no verdict"
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = diagonal / n
        expected = (rows * columns).sum(axis=-1) / (n * n)
        kappa = (observed - expected) / (1 - expected)
    # p_e = 1: both used one and the same category throughout; perfect agreement is kappa 1, any
    # other agreement leaves kappa undefined.
    certain = np.abs(expected - 1) < 1e-12
    return np.where(certain, np.where(np.abs(observed - 1) < 1e-12, 1.0, np.nan), kappa)


def weighted_kappas(
    predicted: Sequence[int] | np.ndarray, reference: Sequence[int] | np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Cohen's kappa once per row of `weights` (R, n): each verdict pair counted as often as its weight
    says (a resample's draw counts); NaN where undefined."""
    per_pair = confusion_tables(predicted, reference, groups=np.arange(len(predicted)), count=len(predicted))
    return np.asarray(kappa_of_tables(np.tensordot(np.asarray(weights, dtype=float), per_pair, axes=(1, 0))))


def kappa(predicted: Sequence[int] | np.ndarray, reference: Sequence[int] | np.ndarray) -> float | None:
    """Cohen's kappa of a judge's verdicts (NO_VERDICT its own category) against the reference."""
    if not len(predicted):
        return None
    value = float(kappa_of_tables(confusion_tables(predicted, reference)[0].astype(float)))
    return None if math.isnan(value) else value


PATTERNS_PER_DRAW = 4096  # distinct rows drawn for at once: 1,000 resamples × 4,096 is 32 MB of counts


def poisson_resampled_sums(per_cluster: np.ndarray, resamples: int = BOOTSTRAP, seed: int = SEED) -> np.ndarray:
    """A Poisson bootstrap over clusters (prompts): per resample, the sum of the clusters' rows of
    `per_cluster`, each cluster counted k times, k drawn from Poisson(1) independently: (resamples, columns).

    Poisson, not multinomial: the counts of different clusters are independent, so clusters whose rows
    are the same can be drawn together (the sum of g Poisson(1) counts is one Poisson(g) count: the same
    distribution). A judge's rows are its confusion counts per prompt, and 20,000 prompts of a pair or
    two each have a few dozen distinct rows: the bootstrap costs a draw per distinct row, not a matrix of
    resamples × prompts per judge (at a million labels that matrix was 40 % of a report's refresh). For
    the ratios measured here (agreement, κ, shares) the Poisson bootstrap is the multinomial's
    large-sample equivalent (Hanley & MacGibbon 2006; Chamandy et al. 2012); a simulation in the tests
    finds the same coverage as the ordinary cluster bootstrap.
    """
    rows = np.asarray(per_cluster, dtype=float)
    patterns, multiplicity = _distinct_rows(rows.reshape(len(rows), -1))
    rng = np.random.default_rng(seed)
    sums = np.zeros((resamples, rows.shape[1]))
    for start in range(0, len(patterns), PATTERNS_PER_DRAW):
        part = slice(start, start + PATTERNS_PER_DRAW)
        counts = rng.poisson(multiplicity[part], size=(resamples, len(multiplicity[part])))
        sums += counts @ patterns[part]
    return sums


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows (in lexicographic order) and how many times each occurs. Rows of small
    non-negative integers (counts) are keyed by one integer each, their digits in mixed radix: np.unique
    over rows sorts them as bytes, and took 2.5 s of a million-label report."""
    if len(rows) and (rows >= 0).all() and (rows == np.floor(rows)).all():
        base = rows.max(axis=0).astype(np.int64) + 1
        if float(np.prod(base.astype(float))) < 2**62:
            place = np.cumprod(np.r_[1, base[::-1][:-1]])[::-1]  # column j's digit counts prod(base[j+1:])
            _, first, counts = np.unique(rows.astype(np.int64) @ place, return_index=True, return_counts=True)
            return rows[first], counts
    patterns, counts = np.unique(rows, axis=0, return_counts=True)
    return patterns, counts


def cluster_positions(clusters: Sequence[Hashable] | np.ndarray) -> tuple[int, np.ndarray]:
    """(how many distinct clusters; each item's position among them, sorted)."""
    keys, groups = np.unique(np.asarray(clusters), return_inverse=True)
    return len(keys), groups.ravel()


def percentiles(values: np.ndarray) -> tuple[float | None, float | None]:
    values = values[~np.isnan(values)]
    if not len(values):
        return None, None
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


@dataclass(frozen=True)
class ClassScores:
    """A verdict's precision, recall and F1 as a judge study reports them per class: precision among the
    judge's verdicts of that class, recall among the reference's (an answer with no verdict a miss)."""

    verdict: int
    support: int  # pairs whose reference is this verdict
    precision: Interval
    recall: Interval
    f1: Interval


def class_scores_of_tables(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per verdict (the last axis: FIRST, SECOND, TIE as CONFUSION_ROWS), the precision, recall and F1 of
    each (..., 3, 4) confusion table; NaN where undefined (no verdict of the class, no reference of it)."""
    hits = np.stack([tables[..., i, i] for i in range(len(CONFUSION_ROWS))], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = hits / tables.sum(axis=-2)[..., : len(CONFUSION_ROWS)]
        recall = hits / tables.sum(axis=-1)
        f1 = 2 * precision * recall / (precision + recall)
    f1 = np.where((precision == 0) & (recall == 0), 0.0, f1)  # scikit-learn's F1 when both are 0
    return precision, recall, f1


def _resampled(
    predicted: Sequence[int] | np.ndarray,
    reference: Sequence[int] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray,
    resamples: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The confusion table and its resamples over clusters (None below MIN_FOR_INTERVAL clusters)."""
    count, groups = cluster_positions(clusters)
    per_cluster = confusion_tables(predicted, reference, groups, count).reshape(count, -1)
    total = per_cluster.sum(axis=0).reshape(len(CONFUSION_ROWS), len(CONFUSION_COLUMNS)).astype(float)
    if count < MIN_FOR_INTERVAL:
        return total, None
    return total, poisson_resampled_sums(per_cluster, resamples, seed).reshape(resamples, *total.shape)


def confusion_figures(
    predicted: Sequence[int] | np.ndarray,
    reference: Sequence[int] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> tuple[Interval, Interval, list[ClassScores]]:
    """Agreement, kappa, and precision, recall and F1 per verdict, each with a 95 % bootstrap interval over
    clusters (prompts), all read from one set of resampled confusion tables (a report resamples once a judge)."""
    if not len(predicted):
        return Interval(None), Interval(None), []
    total, tables = _resampled(predicted, reference, clusters, resamples, seed)
    return (*_agreement_and_kappa(total, tables, len(predicted)), _class_scores(total, tables))


def agreement_and_kappa(
    predicted: Sequence[int] | np.ndarray,
    reference: Sequence[int] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> tuple[Interval, Interval]:
    """Agreement and kappa, each with a 95 % bootstrap interval over clusters (prompts)."""
    agreement, kappa, _ = confusion_figures(predicted, reference, clusters, resamples, seed)
    return agreement, kappa


def _class_scores(total: np.ndarray, tables: np.ndarray | None) -> list[ClassScores]:
    point = class_scores_of_tables(total)
    spread = class_scores_of_tables(tables) if tables is not None else None
    out = []
    for i, verdict in enumerate(CONFUSION_ROWS):
        figures = []
        for kind in range(3):
            value = float(point[kind][i])
            bounds = percentiles(spread[kind][:, i]) if spread is not None else (None, None)
            figures.append(Interval(None, None, None) if math.isnan(value) else Interval(value, *bounds))
        out.append(ClassScores(verdict, int(total[i].sum()), *figures))
    return out


def _agreement_and_kappa(total: np.ndarray, tables: np.ndarray | None, n: int) -> tuple[Interval, Interval]:
    rate = float(total[0, 0] + total[1, 1] + total[2, 2]) / n
    value = float(kappa_of_tables(total))
    if tables is None:
        return Interval(rate), Interval(None if math.isnan(value) else value)
    hits = tables[:, 0, 0] + tables[:, 1, 1] + tables[:, 2, 2]
    with np.errstate(divide="ignore", invalid="ignore"):  # a resample that drew none of the prompts: left out
        agreement = Interval(rate, *percentiles(hits / tables.sum(axis=(1, 2))))
    if math.isnan(value):
        return agreement, Interval(None)
    return agreement, Interval(value, *percentiles(kappa_of_tables(tables)))


@dataclass(frozen=True)
class OrderAgreement:
    """Agreement on the pairs a judge saw in both orders: as first shown, as shown second, and averaged
    over the two orders (each pair's two verdicts scored half each: the headline accuracy of MT-Bench's
    and LLMBar's pairwise judges, which are asked in both orders)."""

    pairs: int
    first_shown: Interval
    second_shown: Interval
    averaged: Interval


def order_agreement(
    first: np.ndarray,
    second: np.ndarray,
    reference: np.ndarray,
    clusters: np.ndarray,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> OrderAgreement | None:
    """`first` and `second`: the judge's verdicts on the same pairs in the order first shown and in the
    other; 95 % bootstrap intervals over clusters (prompts), none below MIN_FOR_INTERVAL of them."""
    if not len(first):
        return None
    hits = np.stack([np.asarray(first) == reference, np.asarray(second) == reference, np.ones(len(first))], axis=1)
    count, groups = cluster_positions(clusters)
    per_cluster = np.zeros((count, 3))
    np.add.at(per_cluster, groups, hits.astype(float))
    total = per_cluster.sum(axis=0)
    values = (total[0] / total[2], total[1] / total[2], (total[0] + total[1]) / (2 * total[2]))
    if count < MIN_FOR_INTERVAL:
        return OrderAgreement(len(first), *(Interval(v) for v in values))
    sums = poisson_resampled_sums(per_cluster, resamples, seed)
    with np.errstate(divide="ignore", invalid="ignore"):  # a resample that drew none of the prompts: left out
        resampled = (sums[:, 0] / sums[:, 2], sums[:, 1] / sums[:, 2], (sums[:, 0] + sums[:, 1]) / (2 * sums[:, 2]))
    first_i, second_i, averaged = (
        Interval(v, *percentiles(r.astype(float))) for v, r in zip(values, resampled, strict=True)
    )
    return OrderAgreement(len(first), first_i, second_i, averaged)


def wilson(hits: int, total: int) -> Interval:
    if not total:
        return Interval(None)
    low, high = _wilson_bounds(hits / total, total)
    return Interval(hits / total, max(0.0, low), min(1.0, high))


# --- position and length ---------------------------------------------------------------------------


def position_flips(verdicts: JudgeVerdicts) -> tuple[int, int]:
    """(flips, pairs) over the pairs judged in both orders with a verdict in each."""
    both = (verdicts.primary >= 0) & (verdicts.other_order >= 0)  # ABSENT and NO_VERDICT are negative
    return int((verdicts.primary[both] != verdicts.other_order[both]).sum()), int(both.sum())


def standardised(values: Sequence[float] | np.ndarray, weights: np.ndarray | None = None) -> np.ndarray | None:
    """Values divided by their sample standard deviation (each value counted `weights` times; None
    when the deviation is 0 or undefined)."""
    x = np.asarray(values, dtype=float)
    w = np.ones(len(x)) if weights is None else np.asarray(weights, dtype=float)
    n = w.sum()
    if n < 2:
        return None
    mean = (w * x).sum() / n
    sd = math.sqrt((w * (x - mean) ** 2).sum() / (n - 1))
    return None if sd == 0 else x / sd


def logistic_fit(
    x: Sequence[float] | np.ndarray,
    y: Sequence[int] | np.ndarray,
    weights: np.ndarray | None = None,
    iterations: int = 50,
) -> tuple[float, float] | None:
    """(intercept, slope) of the maximum-likelihood logistic regression of y on x (each row counted
    `weights` times), by Newton's method; None when it does not exist (one class only, or the classes
    are separated by x)."""
    from scipy.special import expit  # scipy loads on first use, as elsewhere in core

    target = np.asarray(y, dtype=float)
    w = np.ones(len(target)) if weights is None else np.asarray(weights, dtype=float)
    if w.sum() < 3 or len(np.unique(target[w > 0])) < 2:
        return None
    values = np.asarray(x, dtype=float)
    present = w > 0
    ones, zeros = values[present & (target == 1)], values[present & (target == 0)]
    if ones.min() >= zeros.max() or zeros.min() >= ones.max():
        return None  # x separates the classes (touching at most at one value): the slope runs off to infinity
    design = np.column_stack([np.ones(len(target)), values])
    beta = np.zeros(2)
    for _ in range(iterations):
        p = expit(design @ beta)  # 1 / (1 + e^-z) without overflow once separated data sends z far out
        gradient = design.T @ (w * (target - p))
        hessian = design.T @ (design * (w * p * (1 - p))[:, None])
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


def length_slope_counts(difference: np.ndarray, first: np.ndarray, second: np.ndarray) -> float | None:
    """Slope of "picked response 1" on the standardised length difference, from per-pair counts of
    decisive verdicts for response 1 and for response 2 (the same fit as one row per verdict)."""
    return length_slope_interval(difference, first, second).value


def length_slope_interval(difference: np.ndarray, first: np.ndarray, second: np.ndarray) -> Interval:
    """The slope with its 95 % Wald interval (the inverse Fisher information, as statsmodels' Logit
    gives it); no interval on fewer than MIN_FOR_INTERVAL decisive verdicts."""
    difference, first, second = (np.asarray(v, dtype=float) for v in (difference, first, second))
    x = standardised(np.concatenate([difference, difference]), np.concatenate([first, second]))
    if x is None:
        return Interval(None)
    y = np.concatenate([np.ones(len(difference)), np.zeros(len(difference))])
    weights = np.concatenate([first, second])
    fit = logistic_fit(x, y, weights)
    if fit is None:
        return Interval(None)
    if weights.sum() < MIN_FOR_INTERVAL:
        return Interval(fit[1])
    design = np.column_stack([np.ones(len(x)), x])
    p = 1 / (1 + np.exp(-(design @ np.array(fit))))
    information = design.T @ (design * (weights * p * (1 - p))[:, None])
    half = Z95 * math.sqrt(float(np.linalg.inv(information)[1, 1]))
    return Interval(fit[1], fit[1] - half, fit[1] + half)


def difference_of_rates(hits_a: float, total_a: float, hits_b: float, total_b: float) -> Interval:
    """Rate a minus rate b with Newcombe's hybrid score interval (Newcombe 1998, method 10: each rate's
    Wilson interval, combined), the interval statsmodels' confint_proportions_2indep(method="newcomb")
    gives; counts may hold halves (ties). No interval when either side has fewer than MIN_FOR_INTERVAL."""
    if not total_a or not total_b:
        return Interval(None)
    p_a, p_b = hits_a / total_a, hits_b / total_b
    if min(total_a, total_b) < MIN_FOR_INTERVAL:
        return Interval(p_a - p_b)
    a, b = _wilson_bounds(p_a, total_a), _wilson_bounds(p_b, total_b)
    low = p_a - p_b - math.sqrt((p_a - a[0]) ** 2 + (b[1] - p_b) ** 2)
    high = p_a - p_b + math.sqrt((a[1] - p_a) ** 2 + (p_b - b[0]) ** 2)
    return Interval(p_a - p_b, low, high)


def _wilson_bounds(p: float, total: float) -> tuple[float, float]:
    centre = (p + Z95**2 / (2 * total)) / (1 + Z95**2 / total)
    half = Z95 * math.sqrt(p * (1 - p) / total + Z95**2 / (4 * total * total)) / (1 + Z95**2 / total)
    return centre - half, centre + half


def length_slope(picks: Iterable[tuple[int, Pair]]) -> float | None:
    """Slope of "picked response 1" on the standardised length difference, over decisive verdicts."""
    decisive = [(pick, pair) for pick, pair in picks if pick in (FIRST, SECOND)]
    difference = np.array([pair.length_1 - pair.length_2 for _, pair in decisive], dtype=float)
    first = np.array([pick == FIRST for pick, _ in decisive], dtype=float)
    return length_slope_counts(difference, first, 1 - first)


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
    # Binned at 9 decimals: a probability stored for the other order and turned back (1 − (1 − 0.2) =
    # 0.19999999999999996) lands in the bin it came from, so the diagram is the same however a file
    # oriented the pair.
    index = np.minimum((np.round(p, 9) * bins).astype(int), bins - 1)
    table = []
    ece = 0.0
    for b in range(bins):
        members = index == b
        count = int(members.sum())
        mean_p = float(p[members].mean()) if count else None
        mean_y = float(y[members].mean()) if count else None
        if mean_p is not None and mean_y is not None:
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
    count, groups = cluster_positions(clusters)
    if count < MIN_FOR_INTERVAL:
        return Interval((sum(hits_b) - sum(hits_a)) / len(hits_a))
    per_cluster = np.zeros((count, 3))
    np.add.at(per_cluster, groups, np.stack([hits_a, hits_b, np.ones(len(hits_a))], axis=1).astype(float))
    sums = poisson_resampled_sums(per_cluster, resamples, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        differences = (sums[:, 1] - sums[:, 0]) / sums[:, 2]
    low, high = percentiles(differences)
    return Interval((sum(hits_b) - sum(hits_a)) / len(hits_a), low, high)


# --- among people ----------------------------------------------------------------------------------


def _alpha_of(coincidence: np.ndarray) -> np.ndarray:
    """Nominal alpha = 1 − D_o / D_e from (..., k, k) coincidence matrices; NaN where undefined."""
    n_c = coincidence.sum(axis=-1)
    n = n_c.sum(axis=-1)
    diagonal = np.trace(coincidence, axis1=-2, axis2=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = (n - diagonal) / n
        expected = (n * n - (n_c * n_c).sum(axis=-1)) / (n * (n - 1))
        return np.asarray(1 - observed / expected)


def krippendorff_alpha_from_counts(
    counts: np.ndarray,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
    *,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
) -> Interval:
    """Nominal alpha from a units × categories table of rating counts, with a 95 % bootstrap interval
    over units, or over `clusters` (each unit's prompt, as a report resamples). Units with fewer than two
    ratings add nothing; each unit's coincidences are (n_c n_k − [c = k] n_c) / (m − 1) (Krippendorff
    2011, 'Computing Krippendorff's alpha')."""
    counts = np.asarray(counts, dtype=float)
    m = counts.sum(axis=1)
    rated = m >= 2
    counts, m = counts[rated], m[rated]
    if not len(counts):
        return Interval(None)
    k = counts.shape[1]
    per_unit = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)) / (m - 1)[:, None, None]
    value = float(_alpha_of(per_unit.sum(axis=0)))
    if math.isnan(value):
        return Interval(None)
    count, groups = cluster_positions(np.arange(len(counts)) if clusters is None else np.asarray(clusters)[rated])
    if count < MIN_FOR_INTERVAL:
        return Interval(value)
    per_cluster = np.zeros((count, k * k))
    np.add.at(per_cluster, groups, per_unit.reshape(len(counts), -1))
    resampled = poisson_resampled_sums(per_cluster, resamples, seed).reshape(-1, k, k)
    low, high = percentiles(_alpha_of(resampled))
    return Interval(value, low, high)


def krippendorff_alpha(ratings: Sequence[Sequence[int]], resamples: int = BOOTSTRAP, seed: int = SEED) -> Interval:
    """Nominal alpha of the units' ratings (each unit: the people's verdicts on one pair)."""
    categories = sorted({value for unit in ratings for value in unit})
    counts = np.array([[list(unit).count(c) for c in categories] for unit in ratings], dtype=float)
    return krippendorff_alpha_from_counts(counts.reshape(len(ratings), len(categories)), resamples, seed)
