"""The GRE-bench board: every model's GEM scores from the latest finished GEM run per benchmark
and evaluation LM (GEM, Section 5), read from the summary the job stored when it finished."""

from __future__ import annotations

from typing import Any, cast

from evalhub.core.charts import interval_chart
from evalhub.dashboards.shapes import GreBoard, GreRow, ScoreCell, VariantColumn
from evalhub.jobs.models import JobStatus
from evalhub.reads.caching import cached
from evalhub.scoring.gem.results import VARIANT_LABELS
from evalhub.scoring.models import GemRun, GemVariant

# The board's columns, in the paper's order; GEM-raw only appears where a run scored it.
COLUMNS = (GemVariant.GEM, GemVariant.ABSTRACT, GemVariant.ASSW, GemVariant.RAW)


def gre_bench_board(stamp: str) -> list[GreBoard]:
    return cached("gre_bench", _compute, stamp=stamp)


def _compute() -> list[GreBoard]:
    runs = (
        GemRun.objects.filter(job__status=JobStatus.SUCCEEDED)
        .select_related("job", "benchmark")
        .order_by("-job__finished_at", "-pk")
    )
    latest: dict[tuple[int, str], GemRun] = {}
    older: dict[tuple[int, str], int] = {}
    for run in runs:
        key = (run.benchmark_id, run.evaluation_lm)
        if key in latest:
            older[key] = older.get(key, 0) + 1
        else:
            latest[key] = run
    boards: list[GreBoard] = []
    for key, run in latest.items():
        summary = run.job.result or {}
        table = summary.get("table", {})
        variants = [v for v in COLUMNS if v in table]
        rows: dict[str, GreRow] = {}
        for variant in variants:
            for entry in table[variant]:
                row = rows.setdefault(
                    entry["model"],
                    GreRow(
                        model=entry["model"],
                        label=entry.get("name", entry["model"]),
                        baseline=entry.get("baseline", False),
                        cells={},
                    ),
                )
                row["cells"][variant] = ScoreCell(
                    mean=entry.get("mean"), low=entry.get("low"), high=entry.get("high"), n=entry.get("n")
                )
        first = variants[0] if variants else None
        ordered = sorted(
            rows.values(),
            key=lambda r: -(_mean(r["cells"].get(first)) or float("-inf")) if first else 0,
        )
        for row in ordered:
            row["cell_list"] = [row["cells"].get(v) for v in variants]
        boards.append(
            GreBoard(
                run=run.pk,
                job=run.job_id,
                benchmark=run.benchmark.name,
                benchmark_slug=run.benchmark.slug,
                evaluation_lm=run.evaluation_lm,
                interval=summary.get("interval", ""),
                setup=summary.get("setup", {}),
                finished_at=run.job.finished_at,
                older_runs=older.get(key, 0),
                variants=[VariantColumn(key=v, label=VARIANT_LABELS[v]) for v in variants],
                rows=ordered,
            )
        )
    return boards


def _mean(cell: ScoreCell | None) -> float | None:
    return cell["mean"] if cell else None


def with_names(boards: list[GreBoard], names: dict[str, str]) -> list[GreBoard]:
    """Display names (not cached: a rename shows at once) and one chart per variant."""
    out: list[GreBoard] = []
    for board in boards:
        rows = [
            cast(GreRow, {**row, "name": names.get(row["model"], row.get("label", row["model"]))})
            for row in board["rows"]
        ]
        charts = [
            {
                "variant": variant,
                "chart": interval_chart(
                    [
                        {"name": r["name"], "baseline": r["baseline"], **(r["cells"].get(variant["key"]) or {})}
                        for r in rows
                    ]
                ),
            }
            for variant in board["variants"]
        ]
        out.append(cast(GreBoard, {**board, "rows": rows, "charts": charts}))
    return out


def export_rows(boards: list[GreBoard]) -> list[dict[str, Any]]:
    return [
        {
            "benchmark": board["benchmark_slug"],
            "evaluation_lm": board["evaluation_lm"],
            "job": board["job"],
            "model": row["model"],
            "human_baseline": row["baseline"],
            "variant": variant["key"],
            **(row["cells"].get(variant["key"]) or {}),
        }
        for board in boards
        for row in board["rows"]
        for variant in board["variants"]
    ]
