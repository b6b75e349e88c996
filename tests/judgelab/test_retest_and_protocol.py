"""Test–retest reliability (the same pair asked again, same order, a new sample) and the minimum validation
protocol (agreement → κ → consistency → bias audit) on a judge's page, with the thresholds it states and
the user may change; a consistent judge whose verdict follows the order is named as such."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalhub.core.judge_lab.measures import ABSENT, FIRST, SECOND, TIE, LabelArrays, dense_verdicts
from evalhub.core.judge_lab.protocol import FAIL, NOT_MEASURED, PASS, Thresholds, consistent_but_biased, protocol
from evalhub.judgelab.report import compute, judge_key
from evalhub.reads.judged_pairs import Scope
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def test_the_first_two_answers_in_the_first_order_are_the_retest():
    labels = LabelArrays(
        rows=np.array([0, 1, 0, 1, 0, 2]),
        picks=np.array([FIRST, SECOND, FIRST, TIE, SECOND, FIRST]),
        first_shown=np.array([True, True, True, True, True, False]),
        probability=np.full(6, np.nan),
    )
    verdicts = dense_verdicts(labels, 4)
    assert verdicts.first_sample.tolist() == [FIRST, SECOND, FIRST, ABSENT]
    assert verdicts.second_sample.tolist() == [FIRST, TIE, ABSENT, ABSENT]  # pair 2 was answered once


@pytest.fixture
def retested(arena):
    """A judge asked each of 12 pairs twice in the debate's order (one answer differs) and once reversed."""
    debates = [arena.debate("alpha", "beta", verdict=1 + n % 2) for n in range(12)]
    first = {d: [d.verdict, d.verdict if n else 3 - d.verdict] for n, d in enumerate(debates)}
    reversed_ = {d: [1] for d in debates}  # always "the first shown": flips whenever the reference says 2
    arena.judge("openai:twice", first, reversed_verdicts=reversed_)
    return debates, first


def test_retest_agreement_and_kappa_are_those_of_the_two_samples(retested):
    debates, first = retested
    report = next(r for r in compute(Scope()).judges if r.judge.id == "openai:twice")
    a = [first[d][0] for d in debates]
    b = [first[d][1] for d in debates]
    assert report.retest_pairs == 12
    assert report.retest_agreement.value == pytest.approx(11 / 12)
    assert report.retest_kappa.value == pytest.approx(cohen_kappa_score(a, b))
    assert report.as_json()["retest"]["pairs"] == 12


def test_the_protocol_passes_fails_or_says_not_measured_against_the_stated_thresholds(retested):
    report = next(r for r in compute(Scope()).judges if r.judge.id == "openai:twice")
    steps = {step.name: step for step in protocol(report)}
    assert steps["Agreement"].outcome == PASS and steps["Consistency (test–retest κ)"].outcome == PASS
    assert steps["Bias audit: position"].outcome == FAIL  # half the pairs flip with the order
    assert consistent_but_biased(report)
    lenient = {step.name: step for step in protocol(report, Thresholds(position_flips=0.6))}
    assert lenient["Bias audit: position"].outcome == PASS and not consistent_but_biased(
        report, Thresholds(position_flips=0.6)
    )
    strict = {step.name: step for step in protocol(report, Thresholds(retest_kappa=0.99))}
    assert strict["Consistency (test–retest κ)"].outcome == FAIL
    assert Thresholds.of({"kappa": "7", "agreement": "x", "retest_kappa": "0.5"}) == Thresholds(retest_kappa=0.5)


def test_a_judge_asked_once_is_not_measured_for_consistency(arena):
    debates = [arena.debate("alpha", "beta", verdict=1) for _ in range(3)]
    arena.judge("openai:once", {d: [1] for d in debates})
    report = next(r for r in compute(Scope()).judges if r.judge.id == "openai:once")
    step = next(s for s in protocol(report) if s.name.startswith("Consistency"))
    assert step.outcome == NOT_MEASURED and "2 or more samples" in step.measured


def test_the_judge_page_and_its_export_show_the_protocol_at_the_thresholds_asked_for(retested, client):
    client.force_login(make_user("vi", "viewer"))
    key = judge_key("openai:twice")
    page = client.get(f"/judges/{key}/").content.decode()
    assert "Validation protocol" in page and "Consistent but biased" in page
    lenient = client.get(f"/judges/{key}/", {"position_flips": "0.6"}).content.decode()
    assert (
        "Consistent but biased" not in lenient
        and 'name="position_flips" min="0" max="1" step="0.01" value="0.6"' in lenient
    )
    exported = json.loads(client.get(f"/judges/{key}.json", {"position_flips": "0.6"}).content)
    audit = next(s for s in exported["validation_protocol"] if s["name"] == "Bias audit: position")
    assert audit["outcome"] == PASS and audit["threshold"] == "≤ 0.6"
