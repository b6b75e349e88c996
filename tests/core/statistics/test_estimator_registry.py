"""Estimators are registered objects: a new one is offered everywhere an estimator is chosen, used when
asked, falls back saying why where it cannot serve, and declares what it reads, so a board gathers other
judges' labels or categories only for an estimator that reads them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalhub.core.statistics.corrected_ratings import CorrectedBoard, corrected_bradley_terry
from evalhub.core.statistics.estimators import (
    CATEGORIES,
    ESTIMATORS,
    OTHER_JUDGES,
    Chosen,
    Correction,
    Decision,
    Estimator,
    choices,
    choose,
    estimator_asked,
)
from evalhub.core.statistics.ppi import ppi_mean


class HalfWeight(Estimator):
    name, label = "half-weight", "PPI, judge weighted ½"

    def consider(self, labels, *, asked):
        if len(labels.y) < 10:
            return "half-weight: fewer than 10 labels"
        return Decision(self.name, "the judge weighted ½, as asked")

    def mean(self, labels, decision, alpha):
        return Chosen(
            ppi_mean(labels.y, labels.yhat, labels.yhat_unlabelled, alpha, lam=0.5), self.name, decision.reason
        )


@pytest.fixture
def half_weight():
    ESTIMATORS.add(HalfWeight.name, HalfWeight())
    yield
    ESTIMATORS.remove(HalfWeight.name)


def labels(n: int, big_n: int = 200, seed: int = 3):
    rng = np.random.default_rng(seed)
    truth = rng.uniform(size=n + big_n) < 0.6
    judged = np.where(rng.uniform(size=n + big_n) < 0.8, truth, ~truth).astype(float)
    return truth[:n].astype(float), judged[:n], judged[n:]


def test_a_registered_estimator_is_offered_accepted_and_used_when_asked(half_weight):
    assert ("half-weight", "PPI, judge weighted ½") in choices()
    assert estimator_asked("half-weight") == ("half-weight", "")
    assert Correction("half-weight").estimator == "half-weight"
    y, yhat, yhat_u = labels(40)
    picked = choose(y, yhat, yhat_u, asked="half-weight")
    assert (picked.estimator, picked.reason) == ("half-weight", "the judge weighted ½, as asked")
    assert picked.estimate.value == pytest.approx(ppi_mean(y, yhat, yhat_u, lam=0.5).value)
    assert choose(y, yhat, yhat_u).estimator != "half-weight"  # not by_rule: evalhub never picks it


def test_a_registered_estimator_that_cannot_serve_falls_back_to_ppi_and_says_why(half_weight):
    y, yhat, yhat_u = labels(6)
    picked = choose(y, yhat, yhat_u, asked="half-weight")
    assert (picked.estimator, picked.reason) == ("ppi++", "half-weight: fewer than 10 labels; PPI++ instead")


def test_an_unregistered_estimator_is_refused():
    assert estimator_asked("half-weight")[1] == "unknown estimator: chosen by evalhub"
    with pytest.raises(ValueError, match="unknown estimator 'half-weight'"):
        Correction("half-weight")


def test_each_estimator_declares_what_it_reads_and_a_correction_reads_only_that(half_weight):
    assert ESTIMATORS["multi-judge"].reads == {OTHER_JUDGES}
    assert ESTIMATORS["stratified"].reads == {CATEGORIES}
    assert ESTIMATORS["ppi++"].reads == ESTIMATORS["classical"].reads == frozenset()
    assert Correction().reads(OTHER_JUDGES) and Correction().reads(CATEGORIES)  # evalhub may choose either
    assert not Correction("half-weight").reads(OTHER_JUDGES)
    assert not Correction("ppi++").reads(CATEGORIES)
    assert Correction("stratified").reads(CATEGORIES) and not Correction("stratified").reads(OTHER_JUDGES)


def test_only_estimators_with_an_anytime_form_keep_it(half_weight, monkeypatch):
    # An estimator's own word is not a form: only the confidence sequences evalhub computes count.
    monkeypatch.setattr(HalfWeight, "anytime", True, raising=False)
    assert Correction(anytime=True).has_anytime_form
    assert Correction("classical", anytime=True).has_anytime_form
    assert not Correction("half-weight", anytime=True).has_anytime_form
    assert not Correction("multi-judge", anytime=True).has_anytime_form


def test_a_bradley_terry_board_asked_for_an_estimator_of_means_only_is_ppi_and_says_so(half_weight):
    rng = np.random.default_rng(5)
    names = ("m1", "m2", "m3")
    first, second, judge, people = [], [], [], []
    for prompt in range(90):
        first.append(names[prompt % 3]), second.append(names[(prompt + 1) % 3])
        said = float(rng.uniform() < 0.5)
        judge.append(said if rng.uniform() < 0.8 else 1 - said)
        people.append(said if prompt % 2 == 0 else math.nan)
    board = corrected_bradley_terry(first, second, judge, people, clusters=list(range(90)), asked="half-weight")
    assert isinstance(board, CorrectedBoard)
    assert board.estimator == "ppi++"
    assert board.estimator_reason.endswith("PPI, judge weighted ½ has no Bradley–Terry form: PPI++ instead")
