"""The Arena-style pairwise board: Bradley–Terry ratings with bootstrap intervals, ranks, and the
win-rate and battle-count matrices, for any filter of the battles."""

from __future__ import annotations

from collections import Counter
from typing import Any

from evalhub.core import bradley_terry as bt
from evalhub.core.charts import interval_chart
from evalhub.dashboards.battles import SOURCES, Battle, Filters, load_battles
from evalhub.dashboards.caching import cached

ROUNDS = 200  # Arena's bootstrap; the issue asks for at least 200 resamples


def filter_options(battles: list[Battle]) -> dict[str, list[str]]:
    return {
        "criteria": sorted({b.criterion for b in battles}),
        "scenarios": sorted({b.scenario for b in battles}),
        "benchmarks": sorted({b.benchmark for b in battles}),
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
        index = {m: i for i, m in enumerate(board.models)}
        order = [r.model for r in board.ratings]
        matrix = [
            {
                "model": row,
                "cells": [
                    {
                        "opponent": column,
                        "games": board.games[index[row]][index[column]],
                        "win_rate": board.win_rate(index[row], index[column]),
                    }
                    for column in order
                ],
            }
            for row in order
        ]
        return {
            "ratings": [r.as_dict() for r in board.ratings],
            "matrix": matrix,
            "battles": len(kept),
            "by_source": dict(Counter(b.source for b in kept)),
            "rounds": board.rounds,
            "ridge": board.ridge,
            "confidence": board.confidence,
            "options": filter_options(battles),
        }

    return cached(f"pairwise:{filters.key}:{rounds}:{seed}", compute, stamp=stamp)


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
