"""A corrected board whose inputs did not move is taken from the last report, not fitted again (issue 79:
heavy fits cached by the digest of their inputs), and a report made so equals one made from scratch, after
labels by another judge, by the same judge, for new pairs and new models alike."""

from __future__ import annotations

import random

import pytest

from evalhub.core.judge_lab import report as report_module
from evalhub.core.judge_lab.measures import FIRST, SECOND, TIE, Label, Pair
from evalhub.core.judge_lab.report import build_report
from evalhub.core.judge_lab.report_types import MODEL, PERSON, JudgeInfo

MODELS = ("m1", "m2", "m3", "m4")
JUDGES = [JudgeInfo("a", "a", MODEL), JudgeInfo("b", "b", MODEL), JudgeInfo("person:ana", "ana", PERSON)]


def study(prompts: int = 80, seed: int = 5):
    rng = random.Random(seed)
    pairs, labels = {}, {"a": [], "b": [], "person:ana": []}
    for prompt in range(prompts):
        item = ("overall", prompt)
        first, second = MODELS[prompt % 3], MODELS[(prompt + 1) % 3]
        pairs[item] = Pair(cluster=prompt // 2, length_1=90, length_2=120, model_1=first, model_2=second)
        for judge in ("a", "b"):
            labels[judge].append(Label(judge, item, rng.choice([FIRST, FIRST, SECOND, TIE])))
        if prompt % 2 == 0:
            labels["person:ana"].append(Label("person:ana", item, rng.choice([FIRST, SECOND, SECOND, TIE])))
    return pairs, labels


def kept(report) -> dict:
    return {r.corrected_inputs: r.corrected for r in report.judges if r.corrected_inputs}


def boards(report) -> dict:
    return {r.judge.id: (r.corrected, r.corrected_inputs) for r in report.judges}


@pytest.fixture
def fits(monkeypatch) -> list[str]:
    fitted: list[str] = []
    fit = report_module.corrected_board

    def counted(judge, *args, **kwargs):
        fitted.append(judge.id)
        return fit(judge, *args, **kwargs)

    monkeypatch.setattr(report_module, "corrected_board", counted)
    return fitted


def test_a_report_after_another_judges_label_takes_the_boards_whose_inputs_did_not_move(fits):
    pairs, labels = study()
    first = build_report(JUDGES, labels, pairs, {}, resamples=20)
    assert sorted(fits) == ["a", "b"] and all(r.corrected_inputs for r in first.judges if r.judge.kind == MODEL)
    labels["b"][3] = Label("b", labels["b"][3].item, SECOND if labels["b"][3].pick != SECOND else FIRST)
    fits.clear()
    again = build_report(JUDGES, labels, pairs, {}, resamples=20, kept_boards=kept(first))
    assert fits == ["b"], "only the judge whose label changed is fitted again"
    assert boards(again)["a"] == boards(first)["a"]
    fits.clear()
    assert boards(build_report(JUDGES, labels, pairs, {}, resamples=20)) == boards(again), "as from scratch"


def test_a_kept_board_is_taken_by_its_digest_as_it_is(fits):
    pairs, labels = study()
    first = build_report(JUDGES, labels, pairs, {}, resamples=20)
    digest = next(r.corrected_inputs for r in first.judges if r.judge.id == "a")
    fits.clear()
    again = build_report(JUDGES, labels, pairs, {}, resamples=20, kept_boards={digest: "kept board"})
    assert boards(again)["a"] == ("kept board", digest)
    assert fits == ["b"]


@pytest.mark.parametrize("change", ["people", "new pair", "new model", "another prompt order", "estimator"])
def test_what_a_board_is_fitted_from_moves_its_digest_and_the_report_equals_one_from_scratch(change, fits):
    from evalhub.core.statistics.estimators import PPI, Correction

    pairs, labels = study()
    first = build_report(JUDGES, labels, pairs, {}, resamples=20)
    correction = report_module.BY_RULE
    if change == "people":  # people's label on a pair both judges judged moves both boards
        item = labels["person:ana"][0].item
        labels["person:ana"][0] = Label("person:ana", item, FIRST if labels["person:ana"][0].pick != FIRST else SECOND)
    elif change == "new pair":  # a new pair judged by "a" only: b's battles are the same
        item = ("overall", 1000)
        pairs[item] = Pair(cluster=900, length_1=90, length_2=120, model_1="m1", model_2="m2")
        labels["a"].append(Label("a", item, FIRST))
    elif change == "new model":  # a model b never met arrives first in every name order: positions move
        item = ("overall", 1001)
        pairs[item] = Pair(cluster=901, length_1=90, length_2=120, model_1="m0", model_2="m4")
        labels["a"].append(Label("a", item, FIRST))
        labels["person:ana"].append(Label("person:ana", item, SECOND))
    elif change == "another prompt order":  # two pairs' prompts swapped: the clusters' partition moves
        one, other = ("overall", 0), ("overall", 2)
        pairs[one], pairs[other] = (
            Pair(cluster=pairs[one].cluster + 500, length_1=90, length_2=120, model_1="m1", model_2="m2"),
            pairs[other],
        )
    else:
        correction = Correction(PPI)
    fits.clear()
    again = build_report(JUDGES, labels, pairs, {}, resamples=20, correction=correction, kept_boards=kept(first))
    fits_with_kept = sorted(fits)
    fits.clear()
    fresh = build_report(JUDGES, labels, pairs, {}, resamples=20, correction=correction)
    assert boards(again) == boards(fresh)
    moved = {
        "people": ["a", "b"],
        "new pair": ["a"],
        "new model": ["a"],
        "another prompt order": ["a", "b"],
        "estimator": ["a", "b"],
    }[change]
    assert fits_with_kept == moved
