"""One answer per question: the judge lab's figures are a function of the data, never of the order a
worker happened to store a judge's answers in."""

from __future__ import annotations

import random

import pytest

from evalhub.core.judge_lab.measures import FIRST, SECOND, TIE
from evalhub.debates.models import JudgeVerdict
from evalhub.judgelab.observations import Scope
from evalhub.judgelab.report import compute

pytestmark = pytest.mark.django_db


def test_a_judge_runs_figures_do_not_depend_on_which_order_was_stored_first(arena):
    """Both orders of a pair are asked at once, so either answer may be stored first. "The order first
    shown" is the one the run asks first, the debate's: three storage orders, one report."""
    rng = random.Random(3)
    debates = [
        arena.debate("alpha", "beta", rng.choice([FIRST, SECOND]), swapped=n % 2 == 1, category=f"c{n % 3}")
        for n in range(24)
    ]
    shown = {debate: [rng.choice([FIRST, SECOND, TIE])] for debate in debates}
    other = {debate: [rng.choice([FIRST, SECOND, TIE])] for debate in debates}
    run = arena.judge("openai:judge-x", shown, reversed_verdicts=other)
    in_asked_order = compute(Scope()).as_json()
    judge = next(j for j in in_asked_order["judges"] if j["id"] == "openai:judge-x")
    # The headline is the debate's order's verdicts against the consensus, pair by pair.
    expected = sum(shown[d][0] == d.verdict for d in debates) / len(debates)
    assert judge["agreement"] == pytest.approx(expected)
    assert judge["position_pairs"] == len(debates)

    reports = []
    for storage in ("reversed first", "interleaved"):
        JudgeVerdict.objects.filter(judge_run=run).delete()
        for n, debate in enumerate(debates):
            rows = [(False, shown[debate][0]), (True, other[debate][0])]
            if storage == "reversed first" or n % 2:
                rows.reverse()
            for reversed_order, verdict in rows:
                JudgeVerdict.objects.create(
                    judge_run=run, debate=debate, reversed_order=reversed_order, sample=0, text="…", verdict=verdict
                )
        reports.append(compute(Scope()).as_json())
    assert reports == [in_asked_order, in_asked_order]
