"""The tables and bar charts of a DHP or YESciEval run's results page (geometry only: the templates draw)."""

from __future__ import annotations

from typing import Any

from evalhub.scoring.models import (
    DiscernmentFamily,
    DiscernmentRun,
)
from evalhub.scoring.shapes import (
    Bar,
    BarChart,
    DiscernmentSummary,
    JudgeTable,
    RatingChart,
    RatingColumn,
    RubricShift,
)


def _bars(values: list[tuple[str, float]], width: int = 560, label_width: int = 230, row: int = 22) -> BarChart:
    """A server-rendered bar chart of D per perturbation with the D = 1 line (p = 0.05)."""
    top = max([1.5, *(v for _, v in values)])
    plot = width - label_width - 60

    def x(value: float) -> float:
        return round(label_width + min(value, top) / top * plot, 1)

    bars = [
        Bar(
            label=label,
            value=value,
            y=8 + i * row,
            x_end=x(value),
            width=max(0.0, round(x(value) - label_width, 1)),
            discerns=value >= 1,
        )
        for i, (label, value) in enumerate(values)
    ]
    return BarChart(bars=bars, height=16 + len(bars) * row, width=width, x0=label_width, x1=x(1.0))


def _rating_bars(rows: list[RubricShift], width: int = 640, group: int = 62) -> RatingChart:
    """Mean rating per rubric on benign, subtle and extreme answers (1–5), as grouped columns.
    Each column is labelled B, S or E under it, so the chart reads without colour."""
    height, base, top = 170, 140, 20

    def y(rating: float) -> float:
        return round(base - (rating - 1) / 4 * (base - top), 1)

    # Each group is as wide as its longest rubric name (about 6.5 px a character at the tick size),
    # so a name is written whole ("informativeness"), never cut to fit.
    group = max(group, round(6.5 * max((len(row["rubric"]) for row in rows), default=0)) + 10)
    columns: list[RatingColumn] = []
    labels: list[dict[str, Any]] = []
    for index, row in enumerate(rows):
        cell = row["subtle"] or row["extreme"]
        x0 = 40 + index * group
        labels.append({"x": x0 + 24, "text": row["rubric"]})
        for offset, (tag, variant, mean) in enumerate(
            [
                ("B", "benign", cell["mean_benign"] if cell else None),
                ("S", "subtle", row["subtle"]["mean_adversarial"] if row["subtle"] else None),
                ("E", "extreme", row["extreme"]["mean_adversarial"] if row["extreme"] else None),
            ]
        ):
            if mean is None:
                continue
            x = x0 + offset * 16
            columns.append(
                RatingColumn(
                    x=x,
                    y=y(mean),
                    height=round(base - y(mean), 1),
                    tag=tag,
                    variant=variant,
                    mean=mean,
                    rubric=row["rubric"],
                )
            )
    grid = [{"y": y(r), "label": r} for r in (1, 2, 3, 4, 5)]
    return RatingChart(
        columns=columns, labels=labels, grid=grid, width=max(width, 60 + len(rows) * group), height=height, base=base
    )


def judge_tables(run: DiscernmentRun, summary: DiscernmentSummary) -> list[JudgeTable]:
    """Per judge, the rows the results page shows (DHP discernment or YESciEval optimism)."""
    tables: list[JudgeTable] = []
    if summary.get("family") == DiscernmentFamily.YESCIEVAL:
        for judge, rubrics in summary.get("optimism", {}).items():
            shifts = [
                RubricShift(rubric=rubric, subtle=by_variant.get("subtle"), extreme=by_variant.get("extreme"))
                for rubric, by_variant in sorted(rubrics.items(), key=lambda kv: (kv[0] == "all", kv[0]))
            ]
            tables.append(
                JudgeTable(
                    judge=judge,
                    rows=shifts,
                    chart=_rating_bars(shifts),
                    quality=summary["quality"].get(judge, {}),
                )
            )
        return tables + _failed_judge_cards(run, summary, tables)
    for judge, report in summary.get("dhp", {}).get("judges", {}).items():
        rows: list[dict[str, Any]] = [
            {"perturbation": name, **values, "p_by_metric": sorted(values["p_by_metric"].items())}
            for name, values in report["perturbations"].items()
        ]
        tables.append(
            JudgeTable(
                judge=judge,
                summary=report["summary"],
                interval=summary["dhp"].get("intervals", {}).get(judge),
                rows=rows,
                uniform=report.get("uniform_weights_for", []),
                chart=_bars([(r["perturbation"], r["D"]) for r in rows]),
                quality=summary["quality"].get(judge, {}),
            )
        )
    return tables + _failed_judge_cards(run, summary, tables)


def _failed_judge_cards(run: DiscernmentRun, summary: DiscernmentSummary, tables: list[JudgeTable]) -> list[JudgeTable]:
    """A judge with no table is shown with why, never left out: its first error once the run is
    settled, or that it has no usable score yet."""
    shown = {table["judge"] for table in tables}
    failed = summary.get("failed_judges", {})
    return [
        JudgeTable(
            judge=judge,
            failed=failed.get(judge, "No usable score (yet)."),
            quality=summary.get("quality", {}).get(judge, {}),
        )
        for judge in run.judges
        if judge not in shown
    ]
