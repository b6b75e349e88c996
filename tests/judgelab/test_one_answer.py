"""One answer per question: the judge lab's figures are a function of the data, never of the order a
worker happened to store a judge's answers in, nor of how a file orients, orders or splits its pairs."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.core.judge_lab.measures import FIRST, SECOND, TIE
from evalhub.debates.models import JudgeVerdict
from evalhub.judgelab.report import compute
from evalhub.reads.judged_pairs import Scope

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


HEADER = "prompt_id,prompt,category,model_a,model_b,response_a,response_b,judge,judge_kind,winner,probability_a"
JUDGES = (("judge-p", "model"), ("judge-q", "model"), ("ann", "human"), ("bea", "human"), ("cy", "human"))
MIRRORED = {"a": "b", "b": "a", "tie": "tie"}
_benchmarks = itertools.count()


@dataclass(frozen=True)
class Row:
    prompt: int
    model_a: str
    model_b: str
    judge: str
    kind: str
    winner: str
    probability: float | None

    def line(self, swapped: bool) -> str:
        a, b = (self.model_b, self.model_a) if swapped else (self.model_a, self.model_b)
        winner = MIRRORED[self.winner] if swapped else self.winner
        p = "" if self.probability is None else repr(1 - self.probability if swapped else self.probability)
        fields = [f"q{self.prompt}", f"Question {self.prompt}?", ["math", "writing"][self.prompt % 2]]
        return ",".join(
            fields + [a, b, answer(self.prompt, a), answer(self.prompt, b), self.judge, self.kind, winner, p]
        )


def answer(prompt: int, model: str) -> str:
    """Each model's answer to a prompt, of a length that varies by model and prompt."""
    return f"{model} on {prompt}" + " more" * ((prompt * 7 + int(model[1:]) * 3) % 11)


@st.composite
def studies(draw) -> list[Row]:
    """12-24 prompts, a pair of four models each, two model judges (one with probabilities) and three
    people; each judge labels a pair at most once (a judge's second label of a pair is, by definition,
    the order it was shown second: row order is data there)."""
    rows = []
    for prompt in range(draw(st.integers(12, 24))):
        a, b = draw(st.permutations(["m1", "m2", "m3", "m4"]))[:2]
        for judge, kind in JUDGES:
            if draw(st.integers(0, 9)) < 8:
                winner = draw(st.sampled_from(["a", "a", "b", "tie"] if kind == "human" else ["a", "b", "b", "tie"]))
                probability = draw(st.floats(0.02, 0.98)) if judge == "judge-p" else None
                rows.append(Row(prompt, a, b, judge, kind, winner, probability))
    return rows


def report_of(lines: list[str], batches: int = 1, times: int = 1) -> dict:
    slug = f"b{next(_benchmarks)}"
    size = -(-len(lines) // batches)
    for _ in range(times):  # a second import of the same file changes nothing
        for start in range(0, len(lines), size):  # each batch its own import, as a study that grows
            data = "\n".join([HEADER, *lines[start : start + size]]).encode()
            do_import_judgments(filename="l.csv", data=data, benchmark_slug=slug, allow_new_models=True)
    return compute(Scope(benchmark=slug)).as_json()


def assert_same(found, expected, where="report") -> None:
    if isinstance(expected, dict):
        assert found.keys() == expected.keys(), where
        for key in expected:
            assert_same(found[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(found) == len(expected), where
        for i, (f, e) in enumerate(zip(found, expected, strict=True)):
            assert_same(f, e, f"{where}[{i}]")
    elif isinstance(expected, float) and not isinstance(found, str):
        assert found == pytest.approx(expected, rel=1e-12, abs=1e-12, nan_ok=True), where
    else:
        assert found == expected, where


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(study=studies(), data=st.data())
def test_every_figure_is_the_same_however_the_file_writes_orders_or_splits_the_labels(study, data):
    """The same labels with some pairs written b-then-a (verdicts and probabilities mirrored), the rows
    in another order, imported in batches, stored the other way round, or the same file imported a
    second time: every figure of the report,
    bootstrap intervals included, is unchanged. κ, ECE and the length slope moved with the pairs'
    orientation before."""
    expected = report_of([row.line(False) for row in study])
    assert any(judge["kappa"] is not None for judge in expected["judges"])
    swapped = data.draw(st.lists(st.booleans(), min_size=len(study), max_size=len(study)), label="swapped")
    order = data.draw(st.permutations(range(len(study))), label="order")
    assert_same(report_of([row.line(flip) for row, flip in zip(study, swapped, strict=True)]), expected)
    assert_same(report_of([study[i].line(swapped[i]) for i in order]), expected)
    assert_same(report_of([study[i].line(False) for i in order], batches=3), expected)
    assert_same(report_of([row.line(True) for row in reversed(study)]), expected)
    assert_same(report_of([study[i].line(swapped[i]) for i in order], times=2), expected)
