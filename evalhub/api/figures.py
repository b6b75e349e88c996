"""Figures through the API: the benchmarks, a judge's win rates against a baseline (AlpacaEval's
columns) and the judge lab's report, read as the pages read them: the last result kept, with whether
it is current and when it was computed, while a worker computes the current one (never judges × data
in the request)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.shortcuts import get_object_or_404
from ninja import Router, Schema
from ninja.errors import HttpError

from evalhub.api.access import allowed
from evalhub.catalog.models import Benchmark, Criterion
from evalhub.core.files.judgments import DEFAULT_CRITERION
from evalhub.core.statistics.estimators import Correction
from evalhub.dashboards import win_rate_boards
from evalhub.dashboards.baseline_win_rates import Selection, export_rows, labelled_by_people
from evalhub.judgelab.report import report_with_freshness
from evalhub.reads.judged_pairs import BLIND, PEOPLES_VERDICTS, Scope

router = Router(tags=["figures"])


class BenchmarkOut(Schema):
    slug: str
    name: str
    task_type: str


class WinRatesOut(Schema):
    current: bool  # computed from the data as it is now (else the last kept, or none yet)
    computed_at: datetime | None
    refreshing: bool  # a worker was asked for the current board
    rows: list[dict[str, Any]]  # AlpacaEval's leaderboard columns, then the corrected ones where people labelled


class JudgeLabOut(Schema):
    current: bool
    computed_at: datetime | None
    refreshing: bool
    estimator_pending: str  # asked for, not computed yet: the boards shown are by evalhub's rule meanwhile
    report: dict[str, Any]


@router.get("/benchmarks", response=list[BenchmarkOut], auth=allowed())
def list_benchmarks(request):
    return Benchmark.objects.order_by("slug")


def _correction(estimator: str, anytime: bool = False) -> Correction:
    correction, error = Correction.asked(estimator, anytime=anytime)
    if error:
        raise HttpError(422, error)
    return correction


@router.get("/win-rates", response=WinRatesOut, auth=allowed())
def win_rates(
    request,
    benchmark: str,
    judge: str,
    baseline: str,
    criterion: str = DEFAULT_CRITERION,
    estimator: str = "",
    anytime: bool = False,
):
    """A judge's win rates of every model against `baseline` on `benchmark` (the win-rate page's board)."""
    get_object_or_404(Benchmark, slug=benchmark)
    selection = Selection(benchmark=benchmark, judge=judge, baseline=baseline, criterion=criterion)
    state = win_rate_boards.board_state(selection, _correction(estimator, anytime))
    rows = export_rows(state.rows, corrected=labelled_by_people(state.rows))
    return WinRatesOut(current=state.current, computed_at=state.computed_at, refreshing=state.asked, rows=rows)


@router.get("/judge-lab", response=JudgeLabOut, auth=allowed())
def judge_lab(
    request,
    benchmark: str = "",
    criterion: str = "",
    people: str = BLIND,
    improved: str = "",
    estimator: str = "",
):
    """Every judge's report against people (the judge lab's page): `people` blind (default) or revealed
    verdicts; `improved=all` counts improved judges' train pairs too (held-out only by default)."""
    if benchmark:
        get_object_or_404(Benchmark, slug=benchmark)
    if criterion:
        get_object_or_404(Criterion, slug=criterion)
    if people not in PEOPLES_VERDICTS:
        raise HttpError(422, f"people is one of {', '.join(PEOPLES_VERDICTS)}")
    scope = Scope(benchmark=benchmark, criterion=criterion, people=people, train_pairs=improved == "all")
    report, freshness = report_with_freshness(scope, correction=_correction(estimator))
    return JudgeLabOut(
        current=freshness.current,
        computed_at=freshness.computed_at,
        refreshing=freshness.refreshing,
        estimator_pending=freshness.estimator_pending,
        report=report.as_json(),
    )
