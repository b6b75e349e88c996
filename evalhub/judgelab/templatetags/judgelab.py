from __future__ import annotations

from django import template

from evalhub.catalog.judgment_preview import shown_cells
from evalhub.catalog.score_preview import shown_score_cells
from evalhub.judgelab.report import judge_key

register = template.Library()
register.filter("judge_key", judge_key)
register.filter("preview_cells", shown_cells)
register.filter("score_preview_cells", shown_score_cells)
