"""The glue between the judge report and PPI++: the corrected board is fitted on exactly the shares the
definitions promise (a win 1, a loss 0, a tie ½, for the judge and for people alike), on the judge's
battles, with people's labels where they gave them. A board fitted on other inputs (people's ties
counted as losses, say) would still look like a board; this test compares it with PPI++ called by hand."""

from __future__ import annotations

import math
import random
from dataclasses import astuple

import numpy as np
import pytest

from evalhub.core.judge_lab.measures import FIRST, SECOND, TIE, Label, Pair
from evalhub.core.judge_lab.report import build_report
from evalhub.core.judge_lab.report_types import MODEL, PERSON, JudgeInfo
from evalhub.core.statistics.corrected_ratings import CorrectedBoard, corrected_bradley_terry

SHARE = {FIRST: 1.0, SECOND: 0.0, TIE: 0.5}
MODELS = ("m1", "m2", "m3")


def battles(seed: int = 3, prompts: int = 90, labelled: int = 45):
    """A judge on every battle, one person on the first `labelled`, both with plenty of ties."""
    rng = random.Random(seed)
    pairs, judge, person = {}, [], []
    for prompt in range(prompts):
        item = ("overall", prompt)
        first, second = MODELS[prompt % 3], MODELS[(prompt + 1) % 3]
        pairs[item] = Pair(cluster=prompt, length_1=100, length_2=100, model_1=first, model_2=second)
        judge.append(Label("judge", item, rng.choice([FIRST, FIRST, SECOND, TIE])))
        if prompt < labelled:
            person.append(Label("person:ana", item, rng.choice([FIRST, SECOND, TIE, TIE])))
    return pairs, {"judge": judge, "person:ana": person}


@pytest.mark.parametrize("seed", [3, 11])
def test_the_corrected_board_is_ppi_on_shares_with_ties_as_half_for_the_judge_and_for_people(seed):
    pairs, labels = battles(seed)
    judges = [JudgeInfo("judge", "judge", MODEL), JudgeInfo("person:ana", "ana", PERSON)]
    report = build_report(judges, labels, pairs, {}, resamples=20)
    board = next(r for r in report.judges if r.judge.id == "judge").corrected
    assert isinstance(board, CorrectedBoard), board

    items = list(pairs)
    people = {label.item: SHARE[label.pick] for label in labels["person:ana"]}
    assert any(share == 0.5 for share in people.values()), "the case needs people's ties"
    expected = corrected_bradley_terry(
        [pairs[item].model_1 for item in items],
        [pairs[item].model_2 for item in items],
        [SHARE[label.pick] for label in labels["judge"]],
        [people.get(item, math.nan) for item in items],
        clusters=[pairs[item].cluster for item in items],  # every interval cluster-robust by prompt
    )
    assert isinstance(expected, CorrectedBoard)
    assert (board.n_human, board.n_judge, board.prompts) == (expected.n_human, expected.n_judge, 90) == (45, 90, 90)
    assert board.judge_weight == pytest.approx(expected.judge_weight, abs=1e-12)
    ours = {r.model: r for r in board.ratings}
    for rating in expected.ratings:  # the judge's own board, the corrected one and the people's, with intervals
        assert np.allclose(astuple(ours[rating.model])[1:], astuple(rating)[1:], atol=1e-9), rating.model
