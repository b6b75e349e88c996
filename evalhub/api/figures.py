"""Figures through the API: the benchmarks, a judge's win rates against a baseline (AlpacaEval's
columns) and the judge lab's report, read as the pages read them: the last result kept, with whether
it is current and when it was computed, while a worker computes the current one (never judges × data
in the request)."""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from ninja import Query, Router, Schema
from ninja.errors import HttpError

from evalhub.alignment.models import JudgeVersion
from evalhub.alignment.reports import version_rows
from evalhub.api.access import allowed
from evalhub.catalog.exports import EXPORT_FORMATS, TABLES, table_file
from evalhub.catalog.models import Benchmark, Criterion
from evalhub.core.files.judgments import DEFAULT_CRITERION
from evalhub.core.statistics.alt_test import DEFAULT_EPSILON
from evalhub.core.statistics.estimators import Correction
from evalhub.dashboards import pairwise, win_rate_boards
from evalhub.dashboards.baseline_win_rates import export_rows, labelled_by_people
from evalhub.dashboards.pairwise_html import model_names
from evalhub.debates.inspect_export import write_judge_run_log
from evalhub.debates.models import JudgeRun
from evalhub.debates.visibility import withheld_debates
from evalhub.judgelab.pointwise import pointwise_report, scored_benchmarks
from evalhub.judgelab.report import report_with_freshness
from evalhub.reads.caching import fingerprint
from evalhub.reads.judged_pairs import BLIND, PEOPLES_VERDICTS, Scope
from evalhub.system.forms import form_reasons

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


class LeaderboardOut(Schema):
    current: bool
    computed_at: datetime | None
    refreshing: bool
    rows: list[dict[str, Any]]  # ratings (Elo scale, 95 % interval, rank) or the win-rate matrix's cells


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
    """A judge's win rates of every model against `baseline` on `benchmark` (the win-rate page's board,
    found among what was judged as the page finds it, and as small boards computed in the call)."""
    choices = win_rate_boards.kept_choices()
    if not choices and (asked := win_rate_boards.first_choices_pending()) is not None:
        if asked:
            raise HttpError(503, "a worker is computing the list of judged choices: retry in a minute")
        raise HttpError(503, "no worker could be asked for the list of judged choices (the broker did not answer)")
    wanted = {"benchmark": benchmark, "judge": judge, "criterion": criterion, "baseline": baseline}
    _, selection = win_rate_boards.selection_of(choices, wanted)
    if selection is None or selection.baseline != baseline:  # never another baseline's board under this name
        raise HttpError(404, f"{judge} judged no pair against {baseline} on {benchmark} under {criterion}")
    pairs = win_rate_boards.pairs_read(choices, selection)
    state = win_rate_boards.board_state(selection, _correction(estimator, anytime), pairs=pairs)
    rows = export_rows(state.rows, corrected=labelled_by_people(state.rows))
    return WinRatesOut(current=state.current, computed_at=state.computed_at, refreshing=state.asked, rows=rows)


@router.get("/leaderboard", response=LeaderboardOut, auth=allowed())
def leaderboard(
    request,
    source: Query[list[str]] = (),  # type: ignore[assignment]  # ninja's Query default
    benchmark: str = "",
    criterion: str = "",
    scenario: str = "",
    responses: str = "",
    judge: str = "",
    style: bool = False,
    interval: str = "",
    reweighted: bool = False,
    table: str = "ratings",
):
    """The pairwise leaderboard (Bradley–Terry, as `/leaderboards/`) under the page's filters: `table`
    ratings, or win_rates (the matrix, one cell per row). No `source`: those with battles, as the page."""
    if table not in ("ratings", "win_rates"):
        raise HttpError(422, "table is ratings or win_rates")
    stamp = fingerprint()
    query: dict[str, Any] = {"source": list(source), "benchmark": benchmark, "criterion": criterion}
    query |= {"scenario": scenario}
    query |= {"responses": responses, "judge": judge, "style": style, "interval": interval, "reweighted": reweighted}
    form, filters = pairwise.filters_of(query, stamp)
    if filters is None:
        raise HttpError(422, f"these filters cannot be used: {form_reasons(form)}")
    state = pairwise.board_state(filters, stamp)
    rows = [] if state.board is None else pairwise.export_rows(state.board, table, model_names())
    return LeaderboardOut(current=state.current, computed_at=state.computed_at, refreshing=state.asked, rows=rows)


@router.get("/judge-lab", response=JudgeLabOut, auth=allowed())
def judge_lab(
    request,
    benchmark: str = "",
    criterion: str = "",
    people: str = BLIND,
    improved: str = "",
    estimator: str = "",
    epsilon: float = DEFAULT_EPSILON,
):
    """Every judge's report against people (the judge lab's page): `people` blind (default) or revealed
    verdicts; `improved=all` counts improved judges' train pairs too (held-out only by default); each
    judge's alternative annotator test at `epsilon` (0 to 0.5; 0.2 for experts, 0.15 skilled, 0.1 crowd)."""
    if not 0 <= epsilon <= 0.5:
        raise HttpError(422, "epsilon is between 0 and 0.5")
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
        report=report.as_json(epsilon),
    )


@router.get("/pointwise", response=dict[str, Any], auth=allowed())
def pointwise(request, benchmark: str):
    """Pointwise judges and metrics against people's scores of the same responses on `benchmark` (the
    pointwise page's report, as its JSON export)."""
    stamp = fingerprint()
    if benchmark not in scored_benchmarks(stamp):
        raise HttpError(404, "no stored scores of single responses on that benchmark")
    return pointwise_report(benchmark, stamp)


class JudgeVersionsOut(Schema):
    judge: str
    versions: list[dict[str, Any]]  # each with what it changed from its parent, and how it was made


@router.get("/judge-versions/{name}", response=JudgeVersionsOut, auth=allowed())
def judge_versions(request, name: str):
    """A judge's versions (the judge versions page, as its JSON export)."""
    versions = list(JudgeVersion.objects.filter(name=name).select_related("parent", "split__benchmark", "created_by"))
    if not versions:
        raise HttpError(404, "no such judge")
    return JudgeVersionsOut(judge=name, versions=version_rows(versions))


@router.get("/benchmarks/{slug}/export/{table}", auth=allowed())
def export_table(request, slug: str, table: str, format: str = "jsonl"):  # noqa: A002 (the query's name)
    """A benchmark's export table (responses, judgments, scores…) as the benchmark page's download:
    `format` jsonl, csv or hf (a Hugging Face dataset, zipped)."""
    benchmark = get_object_or_404(Benchmark, slug=slug)
    if table not in TABLES:
        raise HttpError(404, f"no export table {table!r}; the tables are {', '.join(TABLES)}")
    if format not in EXPORT_FORMATS:
        raise HttpError(422, f"format is one of {', '.join(EXPORT_FORMATS)}")
    return table_file(benchmark, table, format)


@router.get("/judge-runs/{run_id}/inspect-log", auth=allowed())
def judge_run_inspect_log(request, run_id: int):
    """A judge run's verdicts as an Inspect AI eval log (`.eval`, which `inspect view` opens): one sample
    per pair, order and sample asked, scored against the debate-plus-human reference."""
    run = get_object_or_404(
        JudgeRun.objects.select_related("reference__benchmark", "reference__criterion", "job"), pk=run_id
    )
    with tempfile.TemporaryDirectory() as folder:
        # One rule for held items through every door: a debate the reader holds blind is left out.
        data = write_judge_run_log(run, Path(folder) / "judge.eval", withheld_debates(request.user)).read_bytes()
    response = HttpResponse(data, content_type="application/zip")  # an .eval log is a zip archive
    response["Content-Disposition"] = f'attachment; filename="judge-run-{run.pk}.eval"'
    return response
