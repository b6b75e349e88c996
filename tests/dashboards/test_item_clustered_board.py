"""A board of people's labels where several people label each pair resamples whole pairs (issue 77): the
page says so, its intervals are the item bootstrap's (wider than single labels'), and the same labels
written with a/b swapped, or in another order, give the same board."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.label_counts import shared_label_items
from evalhub.core.statistics import bradley_terry as bt
from evalhub.dashboards.pairwise import pairwise_board
from evalhub.reads.battles import Filters
from evalhub.reads.caching import fingerprint
from evalhub.tallies.models import IMPORTED_PEOPLE

pytestmark = pytest.mark.django_db

MODELS = ("alpha", "beta", "gamma")
HEADER = "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner,criterion\n"


def three_people_a_pair(pairs: int = 60, seed: int = 3, swapped: bool = False, reverse: bool = False) -> str:
    """Each pair labelled by three people who mostly agree (the item's verdict, 85 % of the time)."""
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(pairs):
        first, second = MODELS[index % 3], MODELS[(index + 1) % 3]
        truth = ["a", "b"][int(rng.random() < (0.3 if first == "alpha" else 0.6))]
        for person in ("human-ann", "human-bo", "human-cy"):
            label = truth if rng.random() < 0.85 else str(rng.choice(["a", "b", "tie"]))
            a, b, text_a, text_b = first, second, f"{first} on {index}", f"{second} on {index}"
            if swapped:  # the same label, the pair written the other way
                a, b, text_a, text_b = b, a, text_b, text_a
                label = {"a": "b", "b": "a", "tie": "tie"}[label]
            rows.append(f"p{index},Question {index}?,{a},{b},{text_a},{text_b},{person},{label},overall\n")
    return HEADER + "".join(reversed(rows) if reverse else rows)


def imported(text: str, benchmark: str = "study") -> None:
    do_import_judgments(filename="labels.csv", data=text.encode(), benchmark_slug=benchmark, allow_new_models=True)


PEOPLE = Filters(sources=(IMPORTED_PEOPLE,))


def widths(board) -> dict[str, float]:
    return {row["model"]: row["high"] - row["low"] for row in board["ratings"]}


def test_a_board_of_three_people_a_pair_resamples_pairs_whole_and_says_so(client, viewer, login):
    imported(three_people_a_pair())
    board = pairwise_board(PEOPLE, fingerprint())
    assert board["items"] == 60 and board["shared_items"] == 60 and board["battles"] == 180
    patterns = shared_label_items((IMPORTED_PEOPLE,))
    assert sum(patterns.values()) == 60
    cells = {}
    for pattern, n in patterns.items():
        for cell, amount in pattern:
            cells[cell] = cells.get(cell, 0) + amount * n
    single = bt.leaderboard(bt.from_cells(cells), 200, 0)
    for model, clustered_width in widths(board).items():
        alone = next(r.high - r.low for r in single.ratings if r.model == model)
        assert clustered_width > 1.15 * alone, (model, clustered_width, alone)
    page = login(viewer).get("/leaderboards/?source=imported_people").content.decode()
    assert "resampled by item: 60 independent items, of which 60 pairs labelled by several people" in page


def test_the_same_labels_written_the_other_way_or_in_another_order_give_the_same_board():
    imported(three_people_a_pair(), "study")
    first = pairwise_board(PEOPLE, fingerprint())
    for swapped, reverse in ((True, False), (False, True)):
        from evalhub.catalog.models import Benchmark

        Benchmark.objects.filter(slug="study").delete()
        from evalhub.dashboards.counts import do_rebuild_tallies

        do_rebuild_tallies()
        imported(three_people_a_pair(swapped=swapped, reverse=reverse), "study")
        again = pairwise_board(PEOPLE, fingerprint())
        assert again["ratings"] == first["ratings"], (swapped, reverse)
