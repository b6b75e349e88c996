"""Judge versions as rows for the page and the JSON export: each version's definition and what it
changed from its parent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from evalhub.alignment.comparisons import Comparisons, VersionComparison
from evalhub.alignment.models import JudgeVersion
from evalhub.core.alignment.versions import changes


def version_rows(versions: Sequence[JudgeVersion]) -> list[dict[str, Any]]:
    compared = Comparisons(versions)
    rows = []
    for version in versions:
        parent = version.parent
        rows.append(
            {
                "version": version.number,
                "parent": parent.number if parent is not None else None,
                "method": version.method,
                "method_label": version.get_method_display(),
                "aligned": version.aligned,
                "split": version.split.benchmark.slug if version.split is not None else None,
                "note": version.note,
                "created_at": version.created_at.isoformat(),
                "created_by": str(version.created_by) if version.created_by else None,
                "definition": version.definition,
                "changes": [asdict(change) for change in changes(parent.judge if parent else None, version.judge)],
                "runs": [
                    {"reference": run.judge_run.reference.name, "job": run.judge_run.job_id}
                    for run in compared.runs.get(version.pk, [])
                ],
                "against_parent": [comparison_row(comparison) for comparison in compared.against_parent(version)],
            }
        )
    return rows


MEASURES = {
    "agreement": "agreement with people",
    "kappa": "Cohen's κ with people",
    "order_consistency": "the same verdict in both orders",
    "picks_longer": "picks the longer response",
    "picks_itself": "picks its own model's response (self-preference)",
}


def comparison_row(comparison: VersionComparison) -> dict[str, Any]:
    return {
        "reference": comparison.reference,
        "before": comparison.before,
        "after": comparison.after,
        "held_out_only": comparison.held_out_only,
        "differences": {
            name: {**asdict(difference), "no_change": difference.no_change, "label": MEASURES.get(name, name)}
            for name, difference in comparison.differences.items()
        },
    }
