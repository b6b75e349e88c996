"""What the judge report holds at ten million labels: no table or copy it never reads (0.4 GiB of count
tables for judges whose model is no candidate, 0.25 GiB copying each imported judge's labels)."""

from __future__ import annotations

import numpy as np

from evalhub.core.judge_lab.measures import FIRST, SECOND, LabelArrays, Pair, dense_verdicts
from evalhub.core.judge_lab.report import _counts_by_model, _Index
from evalhub.core.judge_lab.report_types import MODEL, JudgeInfo


def test_count_tables_are_kept_only_for_judges_whose_model_is_a_candidate():
    pairs = {("overall", n): Pair(cluster=n, length_1=1, length_2=2, model_1="m1", model_2="m2") for n in range(4)}
    index = _Index(pairs, {})
    judges = [JudgeInfo("m1", "m1", MODEL, model="m1"), JudgeInfo("judge-x", "judge-x", MODEL, model="judge-x")]
    labels = LabelArrays(np.arange(4), np.array([FIRST, SECOND, FIRST, FIRST]), np.ones(4, bool), np.full(4, np.nan))
    dense = {judge.id: dense_verdicts(labels, 4).primary for judge in judges}
    tables = _counts_by_model(index, judges, dense)
    assert set(tables) == {None, "m1"}
    assert tables[None].sum() == 8 and tables["m1"].sum() == 4


def test_a_judges_labels_in_one_part_are_used_as_they_are():
    part = LabelArrays(np.arange(3), np.array([FIRST, SECOND, FIRST]), np.ones(3, bool), np.full(3, np.nan))
    assert LabelArrays.concatenate([part]) is part
    both = LabelArrays.concatenate([part, part])
    assert both.rows.tolist() == [0, 1, 2, 0, 1, 2]
