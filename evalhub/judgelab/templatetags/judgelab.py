from __future__ import annotations

from django import template

from evalhub.catalog.judgment_preview import shown_cells
from evalhub.catalog.score_preview import shown_score_cells
from evalhub.core.files.judgments import PreviewRow
from evalhub.core.files.scores import ScorePreviewRow
from evalhub.judgelab.report import judge_key

register = template.Library()
register.filter("judge_key", judge_key)


@register.filter
def preview_cells(row: PreviewRow | ScorePreviewRow) -> list[str]:
    """A previewed row's cells, a judgment's or a score's (the upload pages share one preview table)."""
    return shown_score_cells(row) if isinstance(row, ScorePreviewRow) else shown_cells(row)
