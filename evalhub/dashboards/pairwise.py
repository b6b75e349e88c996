"""The Arena-style pairwise board: Bradley–Terry ratings with bootstrap intervals, ranks, and the
win-rate and battle-count matrices, for any filter of the battles."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from evalhub.catalog.models import Judgment, Response
from evalhub.core import bradley_terry as bt
from evalhub.core.charts import interval_chart
from evalhub.core.text_features import STYLE_FEATURES, style_features
from evalhub.dashboards.battles import SOURCES, Battle, Filters, load_battles
from evalhub.dashboards.caching import cached
from evalhub.debates.models import Debate, DebateRun

ROUNDS = 200  # Arena's bootstrap; the issue asks for at least 200 resamples


def filter_options(battles: list[Battle]) -> dict[str, list[str]]:
    """Every value a filter can take, whichever sources the board shows now: a benchmark judged
    only by single judges (or only in imported files) must be choosable before its source is
    ticked. Read from the runs and imported judgments (a few distinct values), plus the battles."""
    criteria, scenarios, benchmarks = set(), set(), set()
    for benchmark, criterion in DebateRun.objects.values_list("benchmark__slug", "criterion__slug").distinct():
        benchmarks.add(benchmark)
        criteria.add(criterion)
    scenarios.update(
        category or "—" for category in Debate.objects.values_list("prompt__category", flat=True).distinct()
    )
    imported = Judgment.objects.filter(response_2__isnull=False).values_list(
        "response__prompt__benchmark__slug", "criterion__slug", "response__prompt__category"
    )
    for benchmark, criterion, category in imported.distinct():
        benchmarks.add(benchmark)
        criteria.add(criterion)
        scenarios.add(category or "—")
    return {
        "criteria": sorted(criteria | {b.criterion for b in battles}),
        "scenarios": sorted(scenarios | {b.scenario for b in battles}),
        "benchmarks": sorted(benchmarks | {b.benchmark for b in battles}),
        "responses": sorted({b.responses for b in battles}),
        "sources": list(SOURCES),
    }


def pairwise_board(
    filters: Filters, stamp: str, rounds: int = ROUNDS, seed: int = 0, battles: list[Battle] | None = None
) -> dict[str, Any]:
    """The board for `filters`, cached. `battles` saves a caller that already read them a second read;
    the list itself is not cached (pickling tens of thousands cost more than reading them again)."""

    def compute() -> dict[str, Any]:
        nonlocal battles
        if battles is None:
            battles = load_battles(stamp, filters.with_judges)
        kept = [b for b in battles if filters.keep(b)]
        board = bt.leaderboard((b.opponent_pair for b in kept), rounds=rounds, seed=seed)
        ratings = [r.as_dict() for r in board.ratings]
        style = _style_control(kept, ratings, seed) if filters.style and kept else None
        if style is not None:
            ratings.sort(key=lambda r: (r["group"], -(r["style_rating"] if r["style_rating"] is not None else -1e9)))
        index = {m: i for i, m in enumerate(board.models)}
        order = [r["model"] for r in ratings]
        matrix = [
            {
                "model": row,
                "cells": [
                    {
                        "opponent": column,
                        "games": board.games[index[row]][index[column]],
                        "win_rate": board.win_rate(index[row], index[column]),
                        "beats": board.beats[index[row]][index[column]],
                    }
                    for column in order
                ],
            }
            for row in order
        ]
        return {
            "ratings": ratings,
            "groups": board.groups,
            "style": style,
            "matrix": matrix,
            "battles": len(kept),
            "by_source": dict(Counter(b.source for b in kept)),
            "rounds": board.rounds,
            "ridge": board.ridge,
            "confidence": board.confidence,
            "options": filter_options(battles),
        }

    return cached(f"pairwise:{filters.key}:{rounds}:{seed}", compute, stamp=stamp)


STYLE_ROUNDS = 100  # each resample is a logistic regression over the battles themselves


def _style_control(kept: list[Battle], ratings: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """Style-controlled ratings (Chatbot Arena's style control) written into `ratings`, fitted per
    connected group; the coefficients of the largest group are returned with the battles used."""
    texts = dict(
        Response.objects.filter(pk__in={i for b in kept for i in (b.response_a, b.response_b)}).values_list(
            "id", "text"
        )
    )
    features = {pk: style_features(text) for pk, text in texts.items()}
    group_of = {r["model"]: r["group"] for r in ratings}
    coefficients: dict[str, float] = {}
    used = 0
    for group in sorted(set(group_of.values())):
        mine = [
            b for b in kept if group_of[b.model_a] == group and b.response_a in features and b.response_b in features
        ]
        models = sorted({m for b in mine for m in (b.model_a, b.model_b)})
        if len(models) < 2:
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
        if group == 1:
            coefficients = dict(zip(STYLE_FEATURES, (float(g) for g in gamma), strict=True))
            used = len(mine)
    return {"coefficients": coefficients, "battles": used, "rounds": STYLE_ROUNDS}


def rating_chart(ratings: list[dict[str, Any]], names: dict[str, str]) -> dict[str, Any]:
    return interval_chart(
        [
            {"name": names.get(r["model"], r["model"]), "mean": r["rating"], "low": r["low"], "high": r["high"]}
            for r in ratings
        ]  # fmt: skip
    )


def export_rows(board: dict[str, Any], table: str, names: dict[str, str]) -> list[dict[str, Any]]:
    """The numbers on the page, flat: ratings, or the matrices one (row, column) cell per line."""
    if table == "ratings":
        return [{"name": names.get(r["model"], r["model"]), **r} for r in board["ratings"]]
    return [
        {"model": row["model"], "opponent": cell["opponent"], "battles": cell["games"], "win_rate": cell["win_rate"]}
        for row in board["matrix"]
        for cell in row["cells"]
        if row["model"] != cell["opponent"]
    ]
