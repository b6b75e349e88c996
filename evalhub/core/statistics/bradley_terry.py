"""Pairwise ratings the way Chatbot Arena computes them: a Bradley–Terry model fitted by
maximum likelihood, shown on an Elo-like scale, with bootstrap intervals over battles.

P(i beats j) = 1 / (1 + 10^((R_j − R_i) / 400)). A tie counts as half a win for each side
(Arena duplicates every battle and splits ties; the likelihood is the same). Ratings are
centred on 1000 (the mean model), since only differences are identified.

A weak Gaussian prior (`ridge`, on strengths in natural-log units) keeps a model that never
lost, or never won, at a finite rating; with hundreds of battles per model it moves ratings
by well under a point. `ridge=0` is the plain maximum-likelihood fit.

Fitting works on aggregated counts (wins[i, j] with ties split, per ordered pair), so its cost
does not grow with the number of battles; a bootstrap resample of N battles is a multinomial
draw over the distinct (model, model, outcome) cells, which has exactly the distribution of
drawing N battles with replacement, and all resamples are fitted together.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from evalhub.core.statistics import logistic
from evalhub.core.statistics.item_patterns import ItemPatterns, patterns_of

SCALE = 400.0
BASE = 10.0
CENTRE = 1000.0
DEFAULT_RIDGE = 0.01
DEFAULT_ROUNDS = 200
BOOTSTRAP, SANDWICH = "bootstrap", "sandwich"
INTERVALS = (BOOTSTRAP, SANDWICH)
MIN_PAIR_COUNT = 50  # arena-rank's floor in 1 / max(battles of the pair, 50)
A, B, TIE = "a", "b", "tie"
OUTCOMES = (A, B, TIE)
_ELO_PER_NAT = SCALE / math.log(BASE)


@dataclass(frozen=True)
class Battles:
    """Distinct (first, second, outcome) cells and how many battles fell in each."""

    models: tuple[str, ...]
    first: np.ndarray  # model index per cell
    second: np.ndarray
    outcome: np.ndarray  # share of the battle won by `first`: 1, 0.5 or 0
    count: np.ndarray
    # Battles that came in items several people labelled (evalhub.core.statistics.item_patterns): the
    # intervals resample those items whole. None: every battle is its own item.
    items: ItemPatterns | None = None

    @property
    def total(self) -> int:
        return int(self.count.sum())


def collect(battles: Iterable[tuple[str, str, str]], models: Sequence[str] | None = None) -> Battles:
    """battles: (model A, model B, outcome) with outcome 'a', 'b' or 'tie'. A battle of a model
    against itself says nothing about strength and is refused, as is an unknown outcome."""
    cells: Counter[tuple[str, str, str]] = Counter()
    for first, second, outcome in battles:
        cells[(first, second, outcome)] += 1
    return from_cells(cells, models)


Cell = tuple[str, str, str]  # (model A, model B, outcome)
ItemPattern = tuple[tuple[Cell, int], ...]  # one item's battles: (cell, how many), each cell once


def _turned(first: str, second: str, outcome: str) -> Cell:
    """The cell with model A's name first (B's win is then A's loss)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"a battle's outcome must be 'a', 'b' or 'tie', not {outcome!r}.")
    if first == second:
        raise ValueError(f"a battle needs two different models, not {first!r} twice.")
    return (second, first, {A: B, B: A, TIE: TIE}[outcome]) if first > second else (first, second, outcome)


def from_cells(
    cells: Mapping[Cell, int], models: Sequence[str] | None = None, items: Mapping[ItemPattern, int] | None = None
) -> Battles:
    """Battles already counted: (model A, model B, outcome) → how many. Each cell is turned so that model
    A's name sorts first (B's win is then A's loss), and the cells are kept in sorted order: counts read
    from a table resample exactly as the same battles listed one by one, and a battle written b-then-a
    is the same battle (its bootstrap draws moved with the order a file or a debate run named the pair).

    `items`: the items of more than one battle (a pair several people labelled), as their patterns
    (how one item's battles fell over the cells) → how many items fell that way; the cells' counts
    include their battles. The intervals then resample items, each other battle an item of its own."""
    turned: Counter[Cell] = Counter()
    for (first, second, outcome), n in cells.items():
        turned[_turned(first, second, outcome)] += n
    cells = turned
    keys = sorted(key for key, n in cells.items() if n > 0)
    names = tuple(models) if models is not None else tuple(sorted({m for f, s, _ in keys for m in (f, s)}))
    index = {name: i for i, name in enumerate(names)}
    missing = {m for f, s, _ in keys for m in (f, s)} - set(index)
    if missing:
        raise ValueError(f"battles name models outside the list: {sorted(missing)}.")
    count = np.array([cells[k] for k in keys], dtype=float)
    return Battles(
        models=names,
        first=np.array([index[f] for f, _, _ in keys], dtype=np.intp),
        second=np.array([index[s] for _, s, _ in keys], dtype=np.intp),
        outcome=np.array([{A: 1.0, B: 0.0, TIE: 0.5}[o] for _, _, o in keys]),
        count=count,
        items=_item_patterns(keys, count, items) if items else None,
    )


def _item_patterns(keys: list[Cell], count: np.ndarray, items: Mapping[ItemPattern, int]) -> ItemPatterns | None:
    """The items' patterns over these cells, each turned as the cells are and merged, in sorted order
    (a function of the data, whatever order the items came in)."""
    position = {key: i for i, key in enumerate(keys)}
    merged: Counter[tuple[tuple[int, int], ...]] = Counter()
    for pattern, n in items.items():
        battles: Counter[int] = Counter()
        for (first, second, outcome), amount in pattern:
            cell = position.get(_turned(first, second, outcome))
            if cell is None:  # read apart from the counts, and newer than them: resample battles this time
                return None
            battles[cell] += amount
        if n > 0 and sum(battles.values()) > 1:
            merged[tuple(sorted(battles.items()))] += n
    if not merged:
        return None
    try:
        return patterns_of(count, [(dict(pattern), n) for pattern, n in sorted(merged.items())])
    except ValueError:  # items holding more battles than the counts: as above
        return None


def _aggregate(battles: Battles, counts: np.ndarray) -> np.ndarray:
    """counts: (R, cells) → wins (R, M, M), wins[r, i, j] = i's (half-tie) wins over j.

    One bincount over (resample, i, j): memory grows with R·cells + R·M², not with cells·M² (a dense
    cells × M² map needed 33 GiB at 200 models and 2M battles)."""
    m = len(battles.models)
    stacked = counts.shape[0]
    slots = np.concatenate([battles.first * m + battles.second, battles.second * m + battles.first])
    shares = np.concatenate([battles.outcome, 1.0 - battles.outcome])
    weights = np.concatenate([counts, counts], axis=1) * shares[None, :]
    flat = (np.arange(stacked)[:, None] * (m * m) + slots[None, :]).ravel()
    return np.bincount(flat, weights=weights.ravel(), minlength=stacked * m * m).reshape(stacked, m, m)


def _objective(beta: np.ndarray, wins: np.ndarray, ridge: float) -> np.ndarray:
    """Negative log-likelihood plus the prior, per stacked problem."""
    diff = beta[:, :, None] - beta[:, None, :]
    return np.asarray(-(wins * -np.logaddexp(0.0, -diff)).sum(axis=(1, 2)) + 0.5 * ridge * (beta**2).sum(axis=1))


def fit_strengths(
    wins: np.ndarray, ridge: float = DEFAULT_RIDGE, tol: float = 1e-10, max_iter: int = 100
) -> np.ndarray:
    """Strengths β (natural-log units, mean 0) maximising the penalised likelihood, for a stack of
    win matrices (R, M, M). Damped Newton: the objective is convex, so halving a step until it
    no longer increases the objective always converges."""
    wins = np.asarray(wins, dtype=float)
    stacked, m = wins.shape[0], wins.shape[1]
    games = wins + wins.transpose(0, 2, 1)
    beta = np.zeros((stacked, m))
    current = _objective(beta, wins, ridge)
    # The shift (1, …, 1) leaves the likelihood unchanged; adding 11ᵀ/M to the Hessian makes it
    # invertible without changing a step that is orthogonal to 1 (the gradient always is).
    pin = np.ones((m, m)) / m
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(beta[:, :, None] - beta[:, None, :])))
        gradient = -(wins - games * p).sum(axis=2) + ridge * beta
        if np.abs(gradient).max() < tol * max(1.0, float(games.max())):
            break
        weight = games * p * (1.0 - p)
        hessian = -weight
        diagonal = np.arange(m)
        hessian[:, diagonal, diagonal] = weight.sum(axis=2) + ridge
        try:
            step = np.linalg.solve(hessian + pin, gradient[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:  # a comparison graph in pieces and no prior: any solution will do
            step = (np.linalg.pinv(hessian + pin) @ gradient[:, :, None])[:, :, 0]
        scale = np.ones(stacked)
        for _ in range(60):
            candidate = beta - scale[:, None] * step
            value = _objective(candidate, wins, ridge)
            worse = value > current + 1e-12 * np.abs(current)
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        beta, current = candidate, value
    return np.asarray(beta - beta.mean(axis=1, keepdims=True))


def to_rating(beta: np.ndarray) -> np.ndarray:
    return np.asarray(CENTRE + _ELO_PER_NAT * beta)


def win_probability(rating_i: float, rating_j: float) -> float:
    return float(1.0 / (1.0 + BASE ** ((rating_j - rating_i) / SCALE)))


def pair_weights(battles: Battles, min_pair_count: int = MIN_PAIR_COUNT) -> np.ndarray:
    """Per cell, LMArena's reweighting (arena-rank, `PairDataset.from_pandas(reweighted=True)`): each
    battle weighs 1 / max(battles of its pair, both orders, min_pair_count), so a pair shown a thousand
    times does not outweigh one shown fifty."""
    m = len(battles.models)
    pair = np.minimum(battles.first, battles.second) * m + np.maximum(battles.first, battles.second)
    per_pair = np.bincount(pair, weights=battles.count, minlength=m * m)
    return np.asarray(1.0 / np.maximum(per_pair[pair], min_pair_count))


def _weighted_ridge(battles: Battles, weights: np.ndarray | None, ridge: float) -> float:
    """The prior keeps its strength relative to the data: scaled by the weighted share of the battles."""
    if weights is None:
        return ridge
    return ridge * float((weights * battles.count).sum() / battles.count.sum())


def ratings(battles: Battles, ridge: float = DEFAULT_RIDGE, weights: np.ndarray | None = None) -> np.ndarray:
    """The fitted rating of every model on the full data (each cell's battles weighted by `weights`)."""
    counts = battles.count if weights is None else battles.count * weights
    return np.asarray(
        to_rating(fit_strengths(_aggregate(battles, counts[None, :]), _weighted_ridge(battles, weights, ridge)))[0]
    )


STACK_BYTES = 256 * 2**20  # what one stack of resamples may hold while it is fitted


def resamples_per_stack(models: int, cells: int, budget: int = STACK_BYTES) -> int:
    """How many resamples are drawn and fitted at once within `budget` bytes. Each holds about ten
    M × M float arrays in the Newton fit (wins, games, p, weights, Hessian, the objective's terms) and
    seven per-cell ones while drawn and aggregated: at 1,000 models a stack of 100 held 6.7 GiB."""
    per_resample = 8 * (10 * models * models + 7 * cells)
    return max(1, min(100, budget // per_resample))


def bootstrap_ratings(
    battles: Battles,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = 0,
    ridge: float = DEFAULT_RIDGE,
    weights: np.ndarray | None = None,
    budget: int = STACK_BYTES,
) -> np.ndarray:
    """(rounds, M) ratings, each fitted on N battles drawn with replacement from the N observed (each
    drawn battle keeping its cell's weight, as arena-rank's bootstrap does); where battles came in items
    (`battles.items`), N items drawn with replacement, each with all its battles. Resamples are fitted
    in stacks sized by `budget`; the draws are the same whatever the stack size."""
    rng = np.random.default_rng(seed)
    units = battles.items.count if battles.items is not None else battles.count  # what is drawn: items
    share = units / units.sum()
    prior = _weighted_ridge(battles, weights, ridge)
    batch = resamples_per_stack(len(battles.models), len(battles.count) + len(units), budget)
    out = []
    for start in range(0, rounds, batch):
        draws = rng.multinomial(int(units.sum()), share, size=min(batch, rounds - start)).astype(float)
        if battles.items is not None:
            draws = battles.items.cell_counts(draws, len(battles.count))
        if weights is not None:
            draws = draws * weights[None, :]
        out.append(to_rating(fit_strengths(_aggregate(battles, draws), prior)))
    return np.concatenate(out) if out else np.zeros((0, len(battles.models)))


def _share_above(resampled: np.ndarray, budget: int = STACK_BYTES) -> np.ndarray:
    """(M, M): the share of resamples in which model i is rated above model j, counted a stack of
    resamples at a time (all at once is rounds × M² booleans, then as many floats)."""
    rounds, m = resampled.shape
    step = max(1, budget // (m * m))  # one byte per comparison
    above = np.zeros((m, m))
    for start in range(0, rounds, step):
        stack = resampled[start : start + step]
        above += (stack[:, :, None] > stack[:, None, :]).sum(axis=0)
    return np.asarray(above / rounds)


def sandwich_covariance(
    battles: Battles, rating: np.ndarray, ridge: float = DEFAULT_RIDGE, weights: np.ndarray | None = None
) -> np.ndarray:
    """The robust (sandwich, HC0) covariance of the strengths in natural-log units, as LMArena's
    arena-rank computes it: H⁻¹ G H⁻¹ with H = Σ w·p(1−p)·x xᵀ (+ the prior) and G = Σ w²·(y−p)²·x xᵀ
    over battles, x = e_first − e_second, y = 1, ½ or 0; where battles came in items (`battles.items`),
    G sums over items the outer product of each item's summed scores (clustered by item). The strengths
    are pinned to mean 0 (the one direction the likelihood does not see), so a rating's variance is
    about the mean model."""
    m = len(battles.models)
    beta = (np.asarray(rating, dtype=float) - CENTRE) / _ELO_PER_NAT
    w = np.ones(len(battles.count)) if weights is None else weights
    p = 1 / (1 + np.exp(-(beta[battles.first] - beta[battles.second])))
    hess = battles.count * w * p * (1 - p)

    def assembled(values: np.ndarray) -> np.ndarray:
        out = np.zeros((m, m))
        np.add.at(out, (battles.first, battles.first), values)
        np.add.at(out, (battles.second, battles.second), values)
        np.add.at(out, (battles.first, battles.second), -values)
        np.add.at(out, (battles.second, battles.first), -values)
        return out

    pin = np.ones((m, m)) / m
    # Adding 11ᵀ/M fixes the mean without touching any contrast; removing it after the inverse
    # leaves the covariance of strengths constrained to mean 0.
    bread = np.linalg.inv(assembled(hess) + _weighted_ridge(battles, weights, ridge) * np.eye(m) + pin)
    centre = np.eye(m) - pin
    if battles.items is None:  # each battle its own item: HC0
        meat = assembled(battles.count * w**2 * (battles.outcome - p) ** 2)
    else:  # clustered by item: each item's battles' scores summed before they are squared
        meat = battles.items.meat(w * (battles.outcome - p), battles.first, battles.second, m)
    return np.asarray(centre @ bread @ meat @ bread @ centre)


def ranks(low: Sequence[float], high: Sequence[float]) -> list[int]:
    """Arena's rank: 1 + the number of models whose lower bound is above this model's upper bound."""
    return [1 + sum(bool(other_low > own_high) for other_low in low) for own_high in high]  # plain ints, not numpy's


class RatingDict(TypedDict):
    """A rating as the boards hold, cache and export it: Rating's fields and its win rate."""

    model: str
    rating: float
    low: float
    high: float
    rank: int
    battles: int
    wins: int
    losses: int
    ties: int
    group: int
    style_rating: float | None
    style_low: float | None
    style_high: float | None
    style_rank: int | None
    win_rate: float | None


@dataclass(frozen=True)
class Rating:
    model: str
    rating: float
    low: float
    high: float
    rank: int
    battles: int
    wins: int
    losses: int
    ties: int
    group: int = 1  # the connected part of the comparison graph this model is rated in (1: the largest)
    style_rating: float | None = None  # with style control (length and markdown held equal)
    style_low: float | None = None
    style_high: float | None = None
    style_rank: int | None = None  # Arena's rank from the style-controlled intervals, within the group

    @property
    def win_rate(self) -> float | None:
        return (self.wins + 0.5 * self.ties) / self.battles if self.battles else None

    def as_dict(self) -> RatingDict:
        return RatingDict(
            model=self.model,
            rating=self.rating,
            low=self.low,
            high=self.high,
            rank=self.rank,
            battles=self.battles,
            wins=self.wins,
            losses=self.losses,
            ties=self.ties,
            group=self.group,
            style_rating=self.style_rating,
            style_low=self.style_low,
            style_high=self.style_high,
            style_rank=self.style_rank,
            win_rate=self.win_rate,
        )


@dataclass(frozen=True)
class Leaderboard:
    ratings: list[Rating]  # best first
    models: tuple[str, ...]
    games: list[list[int]]  # games[i][j], in `models` order
    wins: list[list[float]]  # wins[i][j] with ties counted half
    ties: list[list[int]]
    rounds: int
    ridge: float
    confidence: float
    groups: int = 1  # connected parts of the comparison graph; ratings compare only within one
    beats: list[list[float | None]] | None = None  # P(row's rating above column's) over the resamples
    style: dict[str, float] | None = None  # style coefficients (Elo per standard deviation of each feature)
    interval: str = BOOTSTRAP  # how the intervals were drawn: BOOTSTRAP or SANDWICH
    reweighted: bool = False  # battles weighted 1 / max(battles of their pair, 50)
    items: int = 0  # the independent items the intervals resample, where battles came in items (0: battles)
    shared_items: int = 0  # of those, items of more than one battle (a pair several people labelled)

    def win_rate(self, i: int, j: int) -> float | None:
        return self.wins[i][j] / self.games[i][j] if self.games[i][j] else None


def components(battles: Battles) -> list[list[int]]:
    """The connected parts of the comparison graph (models joined by any battle), largest first: a
    rating is relative to the models it was compared with, so parts are never put on one scale."""
    parent = list(range(len(battles.models)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for first, second in zip(battles.first.tolist(), battles.second.tolist(), strict=True):
        parent[root(first)] = root(second)
    parts: dict[int, list[int]] = {}
    for i in range(len(battles.models)):
        parts.setdefault(root(i), []).append(i)
    return sorted(parts.values(), key=lambda part: (-len(part), battles.models[part[0]]))


def _restrict(battles: Battles, members: list[int]) -> Battles:
    keep = np.isin(battles.first, members)
    local = {model: i for i, model in enumerate(members)}
    return Battles(
        models=tuple(battles.models[i] for i in members),
        first=np.array([local[i] for i in battles.first[keep].tolist()], dtype=np.intp),
        second=np.array([local[i] for i in battles.second[keep].tolist()], dtype=np.intp),
        outcome=battles.outcome[keep],
        count=battles.count[keep],
        items=battles.items.restricted(keep) if battles.items is not None else None,
    )


def leaderboard(
    battles: Iterable[tuple[str, str, str]] | Battles,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = 0,
    ridge: float = DEFAULT_RIDGE,
    confidence: float = 0.95,
    interval: str = BOOTSTRAP,
    reweighted: bool = False,
) -> Leaderboard:
    """Ratings with intervals, Arena ranks, P(row above column) and the win/battle matrices. Each
    connected part of the comparison graph is fitted, resampled and ranked on its own (group 1 the
    largest), centred on 1000.

    `interval`: BOOTSTRAP (percentiles of `rounds` resamples of the battles; P(row above column) from
    them) or SANDWICH (arena-rank's closed form: rating ± z·SE from the robust covariance; P(row above
    column) = Φ(difference / its SE)). `reweighted`: each battle weighs 1 / max(battles of its pair, 50),
    as arena-rank's reweighted fit (the matrices still count battles)."""
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, not {interval!r}.")
    collected = battles if isinstance(battles, Battles) else collect(battles)
    m = len(collected.models)
    rounds = rounds if interval == BOOTSTRAP else 0
    if m == 0:
        return Leaderboard([], (), [], [], [], rounds, ridge, confidence, groups=0, beats=[], interval=interval)
    point, low, high, rank = np.zeros(m), np.zeros(m), np.zeros(m), [0] * m
    group = [0] * m
    beats: list[list[float | None]] = [[None] * m for _ in range(m)]
    tail = (1 - confidence) / 2 * 100
    parts = components(collected)
    for number, members in enumerate(parts, start=1):
        part = _restrict(collected, members)
        weights = pair_weights(part) if reweighted else None
        part_point = ratings(part, ridge, weights)
        resampled = bootstrap_ratings(part, rounds, seed, ridge, weights=weights)
        if interval == SANDWICH:
            part_low, part_high, above = _sandwich_bounds(part, part_point, ridge, weights, confidence)
        elif len(resampled):
            part_low, part_high = np.percentile(resampled, [tail, 100 - tail], axis=0)
            above = _share_above(resampled)
        else:
            part_low, part_high = part_point.copy(), part_point.copy()
            above = (part_point[:, None] > part_point[None, :]).astype(float)
        part_rank = ranks(list(part_low), list(part_high))
        for local, model in enumerate(members):
            point[model], low[model], high[model] = part_point[local], part_low[local], part_high[local]
            rank[model], group[model] = part_rank[local], number
            for other_local, other in enumerate(members):
                if other != model:
                    beats[model][other] = float(above[local, other_local])
    wins = _aggregate(collected, collected.count[None, :])[0]
    games = np.zeros((m, m), dtype=int)
    ties = np.zeros((m, m), dtype=int)
    decisive = np.zeros((m, m), dtype=int)  # decisive[i, j]: battles i won outright against j
    for f, s, o, c in zip(collected.first, collected.second, collected.outcome, collected.count, strict=True):
        games[f, s] += int(c)
        games[s, f] += int(c)
        if o == 0.5:
            ties[f, s] += int(c)
            ties[s, f] += int(c)
        else:
            winner, loser = (f, s) if o == 1.0 else (s, f)
            decisive[winner, loser] += int(c)
    order = sorted(range(m), key=lambda i: (group[i], -point[i]))
    rows = [
        Rating(
            model=collected.models[i],
            rating=float(point[i]),
            low=float(low[i]),
            high=float(high[i]),
            rank=rank[i],
            battles=int(games[i].sum()),
            wins=int(decisive[i].sum()),
            losses=int(decisive[:, i].sum()),
            ties=int(ties[i].sum()),
            group=group[i],
        )
        for i in order
    ]
    return Leaderboard(
        ratings=rows,
        models=collected.models,
        games=games.tolist(),
        wins=wins.tolist(),
        ties=ties.tolist(),
        rounds=rounds,
        ridge=ridge,
        confidence=confidence,
        groups=len(parts),
        beats=beats,
        interval=interval,
        reweighted=reweighted,
        items=collected.items.items if collected.items is not None else 0,
        shared_items=collected.items.shared if collected.items is not None else 0,
    )


def _sandwich_bounds(
    part: Battles, point: np.ndarray, ridge: float, weights: np.ndarray | None, confidence: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closed-form bounds (rating ± z·SE) and P(row above column) = Φ(difference / its SE)."""
    from scipy.stats import norm

    covariance = sandwich_covariance(part, point, ridge, weights) * _ELO_PER_NAT**2
    z = float(norm.ppf(1 - (1 - confidence) / 2))
    spread = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    variance = np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance
    with np.errstate(divide="ignore", invalid="ignore"):
        above = norm.cdf((point[:, None] - point[None, :]) / np.sqrt(np.maximum(variance, 0.0)))
    return point - z * spread, point + z * spread, np.nan_to_num(above, nan=0.5)


# --- style control (Chatbot Arena, "Does style matter?", 2024) ------------------------------------


MIN_BATTLES_PER_PARAMETER = 10  # a group's style fit needs this many battles per rating and coefficient


def style_differences(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Per battle and feature, the normalised difference (a − b) / (a + b) (0 when both are 0), divided
    by its sample standard deviation over the battles (a constant column stays 0).

    Not centred: 0 must mean *no* style difference, so that the ratings are the strengths at equal
    style. Centring on the mean difference shifts the strength of any model that is usually shown on
    one side by γ times that mean (in an AlpacaEval file the baseline is always first and longer), which
    moved every model's chance against it."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    total = first + second
    with np.errstate(divide="ignore", invalid="ignore"):
        difference = np.where(total > 0, (first - second) / total, 0.0)
    spread = difference.std(axis=0, ddof=1) if len(difference) > 1 else np.zeros(difference.shape[1])
    return np.where(spread > 0, difference / np.where(spread > 0, spread, 1), 0.0)


def too_few_for_style(battles: int, models: int, features: int) -> str:
    """Why a group's style-controlled fit would say nothing (empty when it has enough battles)."""
    needed = MIN_BATTLES_PER_PARAMETER * (models - 1 + features)
    if battles >= needed:
        return ""
    return (
        f"{battles} battles for {models} models and {features} style features; style control needs at least "
        f"{needed} ({MIN_BATTLES_PER_PARAMETER} per parameter)."
    )


def fit_with_style(
    first: np.ndarray,
    second: np.ndarray,
    outcome: np.ndarray,
    features: np.ndarray,
    models: int,
    ridge: float = DEFAULT_RIDGE,
    weights: np.ndarray | None = None,
    max_iter: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """Strengths β (natural-log units, mean 0) and style coefficients γ maximising
    Σ w [y log σ(β_a − β_b + γ·z) + (1 − y) log σ(−…)] − ridge/2 |β|² (y = 1, ½ or 0: a tie is half a
    win, as in `fit_strengths`; the prior is on β only). Newton's method with step halving."""
    n, k = len(outcome), features.shape[1]
    design = np.zeros((n, models + k))
    rows = np.arange(n)
    design[rows, first] = 1.0
    design[rows, second] -= 1.0
    design[:, models:] = features
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    y = np.asarray(outcome, dtype=float)
    penalty = np.r_[np.full(models, ridge), np.zeros(k)]
    # The shift of every β by one constant leaves the likelihood unchanged: pin it (see fit_strengths).
    pin = np.zeros((models + k, models + k))
    pin[:models, :models] = 1.0 / models

    theta = logistic.fit(design, y, weights=w, penalty=penalty, pin=pin, max_iter=max_iter)
    beta = theta[:models]
    return beta - beta.mean(), theta[models:]


def style_controlled(
    battles: Sequence[tuple[str, str, str]],
    style_first: np.ndarray,
    style_second: np.ndarray,
    models: Sequence[str],
    rounds: int = 100,
    seed: int = 0,
    ridge: float = DEFAULT_RIDGE,
    confidence: float = 0.95,
) -> tuple[dict[str, tuple[float, float, float]], np.ndarray]:
    """Style-controlled ratings {model: (rating, low, high)} with bootstrap intervals over battles,
    and the style coefficients in Elo per standard deviation of each feature; `models` one
    connected part of the comparison graph (see `components`)."""
    index = {model: i for i, model in enumerate(models)}
    first = np.array([index[a] for a, _, _ in battles], dtype=np.intp)
    second = np.array([index[b] for _, b, _ in battles], dtype=np.intp)
    outcome = np.array([{A: 1.0, B: 0.0, TIE: 0.5}[o] for _, _, o in battles])
    features = style_differences(style_first, style_second)
    beta, gamma = fit_with_style(first, second, outcome, features, len(models), ridge)
    rng = np.random.default_rng(seed)
    resampled = []
    for _ in range(rounds):
        # A resample of the battles, as weights: the same likelihood as the drawn list, one design.
        weights = np.bincount(rng.integers(0, len(battles), len(battles)), minlength=len(battles))
        resampled.append(fit_with_style(first, second, outcome, features, len(models), ridge, weights)[0])
    point = to_rating(beta)
    tail = (1 - confidence) / 2 * 100
    if resampled:
        low, high = np.percentile(to_rating(np.array(resampled)), [tail, 100 - tail], axis=0)
    else:
        low, high = point, point
    out = {model: (float(point[i]), float(low[i]), float(high[i])) for i, model in enumerate(models)}
    return out, gamma * _ELO_PER_NAT
