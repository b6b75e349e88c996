"""The Arena-style pairwise board: Bradley–Terry ratings with bootstrap intervals, ranks, and the
win-rate and battle-count matrices, for any filter of the battles.

Pages show a board kept with when it was computed (`board_state`), as the win-rate boards and the judge
lab do: a board counted from many battles is a worker's to compute — its items of several labels are
read from every label under its filters (0.9 s at ten million of people's labels, 17 s with every
judge's) — and meanwhile the last one is shown marked with its age; a small one is computed in the
request. A file a researcher keeps holds the data as it is: exports wait for the current board, or
answer 503 with Retry-After while a worker computes a large one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.core.cache import cache
from django.utils import timezone

from evalhub.catalog.label_counts import shared_label_items
from evalhub.catalog.models import Response
from evalhub.celery import task_named
from evalhub.core.charts import IntervalChart, interval_chart
from evalhub.core.statistics import bradley_terry as bt
from evalhub.core.text.features import STYLE_FEATURES, style_features
from evalhub.dashboards.counts import battle_counts, battle_options, sources_with_battles
from evalhub.dashboards.shapes import FilterOptions, MatrixCell, MatrixRow, PairwiseBoard, RatingRow, StyleControl
from evalhub.debates.models import DebateRun
from evalhub.reads.battle_filters import BattleFilterForm
from evalhub.reads.battles import SOURCES, Battle, Filters, battle_judges, default_sources, judge_battles, load_battles
from evalhub.reads.caching import ask_worker_once, cached, cached_forever, fingerprint
from evalhub.system.bounded_queries import where_in
from evalhub.tallies.models import BattleCount

ROUNDS = 200  # Arena's bootstrap; the issue asks for at least 200 resamples
# A board counted from this many battles is computed by a worker, not in a page's request.
BACKGROUND_AT = 200_000
REFRESH_TASK = "dashboards.refresh_pairwise_board"
# Part of every kept or cached board's key: a board kept by an evalhub whose boards had other fields (a
# deploy that adds one) is not read back as this one's, where it would lack the field the page asks for.
BOARD_SHAPE = hashlib.sha1(repr(sorted(PairwiseBoard.__annotations__)).encode(), usedforsecurity=False).hexdigest()[:8]


@dataclass(frozen=True)
class KeptPairwise:
    board: PairwiseBoard | None  # None: none kept yet, a worker computes the first
    stamp: str  # the fingerprint of the data it was computed from
    computed_at: datetime | None
    seconds: float  # what computing it took
    current: bool  # computed from the data as it is now
    asked: bool = False  # not current, and a worker computes the current one (False: the broker did not answer)

    @property
    def pending(self) -> bool:
        return self.board is None


def board_state(filters: Filters, stamp: str, *, wait: bool = False) -> KeptPairwise:
    """The board a page shows for `filters` and how fresh it is. The kept one when it is current; else
    computed here when it is counted from fewer than BACKGROUND_AT battles (or `wait`, for a file that must
    hold the data as it is); else the last one kept, marked, while a worker computes the current one."""
    kept = cache.get(kept_key(filters))
    if kept is not None and kept["stamp"] == stamp:
        return _shown(kept, current=True)
    counted = None if wait else battle_counts(filters, stamp=stamp)  # read once: the board counts them too
    if counted is None or sum(r.wins_a + r.wins_b + r.ties for r in counted) < BACKGROUND_AT:
        return _shown(compute_and_keep(filters, stamp, counted), current=True)
    asked = ask_worker_once(
        _refresh_lock(filters),
        lambda: task_named(REFRESH_TASK).apply_async(args=[dataclasses.asdict(filters)]),
        "the pairwise board",
    )
    kept = cache.get(kept_key(filters))  # an eager worker (quickstart, tests) kept it already
    if kept is None:
        return KeptPairwise(None, "", None, 0.0, current=False, asked=asked)
    return _shown(kept, current=kept["stamp"] == stamp, asked=asked)


def refresh(filters: Filters) -> None:
    """A worker's part: the board of the data as it is now, kept, unless the kept one already is."""
    try:
        stamp = fingerprint()
        kept = cache.get(kept_key(filters))
        if kept is None or kept["stamp"] != stamp:
            compute_and_keep(filters, stamp)
    finally:
        cache.delete(_refresh_lock(filters))


def filters_from(data: dict[str, Any]) -> Filters:
    """The filters a task was given (JSON made their tuple of sources a list)."""
    return Filters(**{**data, "sources": tuple(data["sources"])})


def compute_and_keep(filters: Filters, stamp: str, counted: list[BattleCount] | None = None) -> dict[str, Any]:
    # The fingerprint is taken before reading: battles landing meanwhile make the next page ask again.
    started, clock = timezone.now(), time.perf_counter()
    board = pairwise_board(filters, stamp, counted=counted)
    kept = {"board": board, "stamp": stamp, "computed_at": started, "seconds": time.perf_counter() - clock}
    cache.set(kept_key(filters), kept, None)
    return kept


def _shown(kept: dict[str, Any], *, current: bool, asked: bool = False) -> KeptPairwise:
    board, stamp, computed_at, seconds = kept["board"], kept["stamp"], kept["computed_at"], kept["seconds"]
    return KeptPairwise(board, stamp, computed_at, seconds, current, asked and not current)


def kept_key(filters: Filters) -> str:
    return f"dashboards:pairwise_board:{BOARD_SHAPE}:{filters.key}"


def _refresh_lock(filters: Filters) -> str:
    return f"dashboards:pairwise_refreshing:{filters.key}"


def filter_options() -> FilterOptions:
    """Every value a filter can take, whichever sources the board shows now: a benchmark judged
    only by single judges (or only in imported files) must be choosable before its source is
    ticked. Read from the runs (a few distinct values) and the counted battles of every source."""
    counted = battle_options()
    criteria, benchmarks = counted["criterion"], counted["benchmark"]
    for benchmark, criterion in DebateRun.objects.values_list("benchmark__slug", "criterion__slug").distinct():
        benchmarks.add(benchmark)
        criteria.add(criterion)
    return {
        "criteria": sorted(criteria),
        "scenarios": sorted(counted["scenario"]),
        "benchmarks": sorted(benchmarks),
        "responses": sorted(counted["responses"]),
        "sources": list(SOURCES),
        "judges": battle_judges(),
    }


def pairwise_board(
    filters: Filters,
    stamp: str,
    rounds: int = ROUNDS,
    seed: int = 0,
    battles: list[Battle] | None = None,
    counted: list[BattleCount] | None = None,
) -> PairwiseBoard:
    """The board for `filters`, cached, from the counted battles (evalhub.tallies). Style control
    needs each battle's two texts, so a style-controlled board reads the battles themselves
    (`battles` saves a caller that already read them a second read; `counted`, the counts read already)."""

    def compute() -> PairwiseBoard:
        if filters.style:
            read = judge_battles(filters.judge, stamp) if filters.judge else battles  # a judge's own, not all
            kept = [b for b in (read or load_battles(stamp, filters.with_judges)) if filters.keep(b)]
            cells = Counter(b.opponent_pair for b in kept)
            by_source = Counter(b.source for b in kept)
        else:
            kept = []
            cells, by_source = Counter(), Counter()
            for row in battle_counts(filters, stamp=stamp) if counted is None else counted:
                for outcome, n in zip(("a", "b", "tie"), (row.wins_a, row.wins_b, row.ties), strict=True):
                    cells[(row.model_a, row.model_b, outcome)] += n
                by_source[row.source] += row.wins_a + row.wins_b + row.ties
        # Pairs several people (or judges) labelled are resampled whole (issue 77).
        shared = shared_label_items(
            filters.sources, filters.criterion, filters.scenario, filters.benchmark, filters.responses, filters.judge
        )
        board = _fitted(cells, rounds, seed, filters.interval, filters.reweighted, shared)
        ratings = [r.as_dict() for r in board.ratings]
        style = _style_control(kept, ratings, seed) if filters.style and kept else None
        if style is not None:
            ratings.sort(key=lambda r: (r["group"], -(r["style_rating"] if r["style_rating"] is not None else -1e9)))
        index = {m: i for i, m in enumerate(board.models)}
        order = [r["model"] for r in ratings]
        matrix = [
            MatrixRow(
                model=row,
                cells=[
                    MatrixCell(
                        opponent=column,
                        games=board.games[index[row]][index[column]],
                        win_rate=board.win_rate(index[row], index[column]),
                        beats=board.beats[index[row]][index[column]] if board.beats else None,
                        wins=_outcome(cells, row, column, "a", "b"),
                        losses=_outcome(cells, row, column, "b", "a"),
                        ties=_outcome(cells, row, column, "tie", "tie"),
                    )
                    for column in order
                ],
            )
            for row in order
        ]
        return {
            "ratings": ratings,
            "groups": board.groups,
            "style": style,
            "matrix": matrix,
            "battles": sum(cells.values()),
            "by_source": {source: n for source, n in by_source.items() if n},
            "rounds": board.rounds,
            "interval": board.interval,
            "reweighted": board.reweighted,
            "ridge": board.ridge,
            "confidence": board.confidence,
            "options": filter_options(),
            "items": board.items,
            "shared_items": board.shared_items,
            "digest": None if filters.style else _digest(cells, by_source, shared, filters, rounds, seed),
        }

    return cached(f"pairwise:{BOARD_SHAPE}:{filters.key}:{rounds}:{seed}", compute, stamp=stamp)


def _digest(cells: Counter, by_source: Counter, shared: Counter, filters: Filters, rounds: int, seed: int) -> str:
    content = (sorted(cells.items()), sorted(by_source.items()), sorted(shared.items()), filters.key, rounds, seed)
    return hashlib.sha1(repr(content).encode(), usedforsecurity=False).hexdigest()


def _outcome(cells: Counter, row: str, column: str, as_first: str, as_second: str) -> int:
    """The row model's battles against the column model that ended `as_first` where the row model was
    model a, and `as_second` where it was model b (battles are stored either way round)."""
    return int(cells[(row, column, as_first)] + cells[(column, row, as_second)])


def _fitted(
    cells: Counter,
    rounds: int,
    seed: int,
    interval: str = bt.BOOTSTRAP,
    reweighted: bool = False,
    items: Counter | None = None,
) -> bt.Leaderboard:
    """The fit and its intervals for these counts (and items of several labels), reused until they change."""
    kept = {key: n for key, n in cells.items() if n > 0}
    shared = sorted((items or Counter()).items())
    key = hashlib.sha1(repr((sorted(kept.items()), shared)).encode(), usedforsecurity=False).hexdigest()
    return cached_forever(
        f"bt:{key}:{rounds}:{seed}:{interval}:{int(reweighted)}",
        lambda: bt.leaderboard(
            bt.from_cells(kept, items=dict(shared)), rounds, seed, interval=interval, reweighted=reweighted
        ),
    )


STYLE_ROUNDS = 100  # each resample is a logistic regression over the battles themselves


def _style_control(kept: list[Battle], ratings: list[RatingRow], seed: int) -> StyleControl:
    """Style-controlled ratings (Chatbot Arena's style control) written into `ratings`, fitted per
    connected group; the coefficients of the largest group are returned with the battles used."""
    compared = {i for b in kept for i in (b.response_a, b.response_b)}
    texts = where_in(Response.objects.values_list("id", "text"), "pk", sorted(compared))
    features = {pk: style_features(text) for pk, text in texts}
    group_of = {r["model"]: r["group"] for r in ratings}
    coefficients: dict[str, float] = {}
    used = 0
    skipped: dict[str, str] = {}  # model → why it has no style-controlled rating
    for group in sorted(set(group_of.values())):
        mine = [
            b for b in kept if group_of[b.model_a] == group and b.response_a in features and b.response_b in features
        ]
        models = sorted({m for b in mine for m in (b.model_a, b.model_b)})
        if len(models) < 2:
            continue
        reason = bt.too_few_for_style(len(mine), len(models), len(STYLE_FEATURES))
        if reason:
            skipped.update(dict.fromkeys(models, reason))
            continue
        fitted, gamma = bt.style_controlled(
            [b.opponent_pair for b in mine],
            np.array([features[b.response_a] for b in mine], dtype=float),
            np.array([features[b.response_b] for b in mine], dtype=float),
            models,
            rounds=STYLE_ROUNDS,
            seed=seed,
        )
        for row in ratings:
            if row["model"] in fitted:
                row["style_rating"], row["style_low"], row["style_high"] = fitted[row["model"]]
        # The board is ordered by these ratings: its Rank column is theirs (Arena's "Rank (StyleCtrl)").
        rated = [row for row in ratings if row["model"] in fitted]
        lows, highs = [fitted[row["model"]][1] for row in rated], [fitted[row["model"]][2] for row in rated]
        for row, rank in zip(rated, bt.ranks(lows, highs), strict=True):
            row["style_rank"] = rank
        if group == 1:
            coefficients = dict(zip(STYLE_FEATURES, (float(g) for g in gamma), strict=True))
            used = len(mine)
    return {"coefficients": coefficients, "battles": used, "rounds": STYLE_ROUNDS, "skipped": skipped}


def rating_chart(ratings: list[RatingRow], names: dict[str, str], style: bool = False) -> IntervalChart:
    """The ratings with their intervals; with `style`, the style-controlled ones the board is ordered by
    (a model without one is not drawn; the table says why)."""
    return interval_chart(
        [
            {
                "name": names.get(r["model"], r["model"]),
                "mean": r["style_rating"],
                "low": r["style_low"],
                "high": r["style_high"],
            }
            if style
            else {"name": names.get(r["model"], r["model"]), "mean": r["rating"], "low": r["low"], "high": r["high"]}
            for r in ratings
        ]
    )


def export_rows(board: PairwiseBoard, table: str, names: dict[str, str]) -> list[dict[str, Any]]:
    """The numbers on the page, flat: ratings, or the matrices one (row, column) cell per line."""
    if table == "ratings":
        return [{"name": names.get(r["model"], r["model"]), **r} for r in board["ratings"]]
    return [
        {
            "model": row["model"],
            "opponent": cell["opponent"],
            "battles": cell["games"],
            "win_rate": cell["win_rate"],
            **{outcome: cell.get(outcome) for outcome in ("wins", "losses", "ties")},  # absent from older boards
        }
        for row in board["matrix"]
        for cell in row["cells"]
        if row["model"] != cell["opponent"]
    ]


def filters_of(query: Any, stamp: str) -> tuple[BattleFilterForm, Filters | None]:
    """The battle filters a query asks for (a page's GET, the API's parameters), with no source ticked
    meaning those that have battles under the other filters (read once per fingerprint), or one judge's
    verdicts wherever they came from; None (with the form's errors) when invalid."""
    form = BattleFilterForm(query)
    if not form.is_valid():
        return form, None
    filters = form.filters()
    if not filters.sources and filters.judge:
        return form, filters.with_sources(tuple(SOURCES))
    if not filters.sources:
        present = cached(f"sources:{filters.key}", lambda: sources_with_battles(filters), stamp=stamp)
        filters = filters.with_sources(default_sources(present))
    return form, filters
