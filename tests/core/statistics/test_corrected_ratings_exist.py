"""A Bradley–Terry rating exists only where the battles rank every model (Zermelo's condition: the graph
of who scored against whom is strongly connected). Where a judge's verdicts do not, its own column says
so instead of a rating wherever the optimiser stopped."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from evalhub.core.statistics.corrected_ratings import CorrectedBoard, corrected_bradley_terry, rank_every_model


def brute_force(first, second, share, models: int) -> bool:
    """Every model reaches every other along 'scored against' edges (a win or a tie)."""
    reach = np.eye(models, dtype=bool)
    for a, b, s in zip(first, second, share, strict=True):
        if s > 0:
            reach[a, b] = True
        if s < 1:
            reach[b, a] = True
    for k, i, j in itertools.product(range(models), repeat=3):  # Floyd–Warshall's closure
        reach[i, j] |= reach[i, k] and reach[k, j]
    return bool(reach.all())


@pytest.mark.parametrize("seed", range(40))
def test_every_model_is_ranked_exactly_when_every_model_reaches_every_other(seed):
    rng = np.random.default_rng(seed)
    models, battles = int(rng.integers(2, 6)), int(rng.integers(1, 12))
    first = rng.integers(0, models, battles)
    second = (first + rng.integers(1, models, battles)) % models
    share = rng.choice([0.0, 0.5, 1.0, 0.3], size=battles, p=[0.4, 0.1, 0.4, 0.1])
    assert rank_every_model(first, second, share, models) == brute_force(first, second, share, models)


def battles(judge_m3_always_wins: bool):
    """Three models on 60 prompts; people label every other battle, with wins and losses for everyone;
    the judge agrees with people, except that it may make m3 win every battle it is in."""
    rng = np.random.default_rng(7)
    first, second, judge, people = [], [], [], []
    names = ("m1", "m2", "m3")
    for prompt in range(60):
        a, b = names[prompt % 3], names[(prompt + 1) % 3]
        said = float(rng.uniform() < 0.5)
        first.append(a), second.append(b)
        judge.append(1.0 if judge_m3_always_wins and a == "m3" else 0.0 if judge_m3_always_wins and b == "m3" else said)
        people.append(said if prompt % 2 == 0 else math.nan)
    return first, second, judge, people


def test_a_judge_whose_verdicts_never_let_a_model_lose_has_no_rating_of_its_own_but_a_corrected_one():
    board = corrected_bradley_terry(*battles(judge_m3_always_wins=True), clusters=list(range(60)))
    assert isinstance(board, CorrectedBoard)
    for rating in board.ratings:
        assert (rating.judge, rating.judge_low, rating.judge_high) == (None, None, None), rating
        assert all(math.isfinite(v) for v in (rating.corrected, rating.people_low, rating.people_high))
    rated = corrected_bradley_terry(*battles(judge_m3_always_wins=False), clusters=list(range(60)))
    assert all(rating.judge is not None and abs(rating.judge - 1000) < 1000 for rating in rated.ratings)


def test_people_whose_labels_never_let_a_model_lose_get_the_reason_not_a_board_by_the_battles_order():
    first, second, judge, people = battles(judge_m3_always_wins=False)
    people = [
        p if math.isnan(p) else 1.0 if a == "m3" else 0.0 if b == "m3" else p
        for a, b, p in zip(first, second, people, strict=True)
    ]
    for order in (slice(None), slice(None, None, -1)):
        said = corrected_bradley_terry(first[order], second[order], judge[order], people[order])
        assert said.startswith("people's labels do not rank every model"), said
