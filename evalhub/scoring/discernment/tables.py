"""The tables and charts of a DHP or YESciEval run's results page (chart geometry in
evalhub.core.charts, drawn by the chart template tags like every chart)."""

from __future__ import annotations

from typing import Any

from evalhub.core.charts import bar_chart, rating_columns
from evalhub.scoring.models import (
    DiscernmentFamily,
    DiscernmentRun,
)
from evalhub.scoring.shapes import (
    DiscernmentSummary,
    JudgeTable,
    RubricShift,
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
                    chart=rating_columns(shifts),
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
                chart=bar_chart([(r["perturbation"], r["D"]) for r in rows]),
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
