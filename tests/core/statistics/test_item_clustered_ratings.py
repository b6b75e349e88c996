"""Where several people label one pair, the board's intervals resample whole items (issue 77): checked
against an independent item bootstrap written here and statsmodels' cluster-robust covariance."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from evalhub.core.statistics import bradley_terry as bt

MODELS = ("alpha", "beta", "gamma", "delta")
STRENGTH = {"alpha": 0.6, "beta": 0.2, "gamma": -0.1, "delta": -0.7}


def labelled_items(pairs: int = 240, people: int = 3, agreement: float = 0.85, seed: int = 5):
    """`pairs` items, each a pair of models labelled by `people` who mostly agree with the item's own
    (latent) verdict: labels within an item are strongly correlated, as in a published study."""
    rng = np.random.default_rng(seed)
    items = []
    for index in range(pairs):
        a, b = rng.choice(len(MODELS), 2, replace=False)
        first, second = MODELS[a], MODELS[b]
        truth = "a" if rng.random() < 1 / (1 + np.exp(STRENGTH[second] - STRENGTH[first])) else "b"
        labels = [truth if rng.random() < agreement else rng.choice(["a", "b", "tie"]) for _ in range(people)]
        # Half the items written b-then-a, as files and debate runs name pairs either way.
        if index % 2:
            labels = [{"a": "b", "b": "a", "tie": "tie"}[label] for label in labels]
            first, second = second, first
        items.append((first, second, labels))
    return items


def board_input(items):
    cells: Counter = Counter()
    patterns: Counter = Counter()
    for first, second, labels in items:
        pattern = Counter((first, second, label) for label in labels)
        cells.update(pattern)
        patterns[tuple(sorted(pattern.items()))] += 1
    return cells, patterns


def width(board: bt.Leaderboard) -> dict[str, float]:
    return {r.model: r.high - r.low for r in board.ratings}


def independent_item_bootstrap(items, rounds: int, seed: int) -> dict[str, float]:
    """Items drawn with replacement, each with all its labels, fitted one resample at a time."""
    rng = np.random.default_rng(seed)
    fitted = []
    for _ in range(rounds):
        drawn = [items[i] for i in rng.integers(0, len(items), len(items))]
        cells, _ = board_input(drawn)
        fitted.append(bt.ratings(bt.from_cells(cells, MODELS)))
    low, high = np.percentile(np.array(fitted), [2.5, 97.5], axis=0)
    return dict(zip(MODELS, high - low, strict=True))


def test_the_board_resamples_items_and_its_widths_match_an_independent_item_bootstrap():
    items = labelled_items()
    cells, patterns = board_input(items)
    clustered = bt.leaderboard(bt.from_cells(cells, items=patterns), rounds=600, seed=1)
    single = bt.leaderboard(bt.from_cells(cells), rounds=600, seed=1)
    reference = independent_item_bootstrap(items, rounds=600, seed=2)
    assert clustered.items == len(items) and clustered.shared_items == len(items)
    for model in MODELS:
        assert width(clustered)[model] == pytest.approx(reference[model], rel=0.15), model
        assert width(single)[model] < 0.85 * width(clustered)[model], "labels as independent battles: too narrow"
    assert [r.rating for r in clustered.ratings] == [r.rating for r in single.ratings], "the fit is the same"


def test_the_clustered_sandwich_equals_statsmodels_cluster_robust_covariance():
    sm = pytest.importorskip("statsmodels.api")
    items = labelled_items(pairs=160, seed=9)
    cells, patterns = board_input(items)
    battles = bt.from_cells(cells, MODELS, items=patterns)
    point = bt.ratings(battles, ridge=0.0)
    ours = bt.sandwich_covariance(battles, point, ridge=0.0)
    # The same fit as a logistic regression on one row per label (a tie is y = ½), grouped by item.
    rows, outcomes, groups = [], [], []
    for number, (first, second, labels) in enumerate(items):
        a, b = bt._turned(first, second, "a")[:2]
        for label in labels:
            x = np.zeros(len(MODELS))
            x[MODELS.index(a)], x[MODELS.index(b)] = 1.0, -1.0
            turned = bt._turned(first, second, label)[2]
            rows.append(x[1:])  # alpha's strength fixed at 0: the one direction the likelihood does not see
            outcomes.append({"a": 1.0, "b": 0.0, "tie": 0.5}[turned])
            groups.append(number)
    model = sm.GLM(np.array(outcomes), np.array(rows), family=sm.families.Binomial())
    fitted = model.fit(cov_type="cluster", cov_kwds={"groups": np.array(groups), "use_correction": False})
    theirs = np.zeros((len(MODELS), len(MODELS)))
    theirs[1:, 1:] = fitted.cov_params()
    for i in range(len(MODELS)):
        for j in range(i + 1, len(MODELS)):
            contrast = np.zeros(len(MODELS))
            contrast[i], contrast[j] = 1.0, -1.0
            assert contrast @ ours @ contrast == pytest.approx(contrast @ theirs @ contrast, rel=1e-6)


def test_with_every_item_a_single_battle_the_draws_are_the_battle_bootstraps():
    items = labelled_items(pairs=120, people=1, seed=3)
    cells, patterns = board_input(items)
    with_items = bt.leaderboard(bt.from_cells(cells, items=patterns), rounds=50, seed=4)
    without = bt.leaderboard(bt.from_cells(cells), rounds=50, seed=4)
    assert with_items == without


def test_items_resample_alike_however_they_are_listed_or_oriented():
    items = labelled_items(pairs=90, seed=11)
    cells, patterns = board_input(items)
    flipped = [
        (second, first, [{"a": "b", "b": "a", "tie": "tie"}[x] for x in labels]) for first, second, labels in items
    ]
    cells_2, patterns_2 = board_input(list(reversed(flipped)))
    one = bt.leaderboard(bt.from_cells(cells, items=patterns), rounds=80, seed=7)
    two = bt.leaderboard(bt.from_cells(cells_2, items=dict(reversed(list(patterns_2.items())))), rounds=80, seed=7)
    assert one == two
