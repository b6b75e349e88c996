"""What an import would read from a score file's (or Inspect logs') first rows, shown before anything is
written: each row as a score, and its own problems. The same readers as the import, stopped after a few rows."""

from __future__ import annotations

import contextlib
from dataclasses import replace

from evalhub.catalog.actions.importing import ImportRejected, format_and_data, held_responses
from evalhub.catalog.actions.scores import uploaded_logs
from evalhub.catalog.judgment_preview import cut, shown_response
from evalhub.core.files.rows import FileError, RowError, Source
from evalhub.core.files.scores import ScorePreviewRow, preview_score_rows, score_rows

PREVIEW_ROWS = 10
PREVIEW_HEADERS = ("Prompt", "Model", "Response", "Rater", "Kind", "Criterion", "Score", "Reason")
INSPECT_LOGS = "Inspect logs"


def preview_score_file(filename: str, data: Source, *, benchmark_slug: str = "") -> tuple[str, list[ScorePreviewRow]]:
    """(what was read: the file's format or Inspect logs, the first PREVIEW_ROWS rows as the import reads them,
    each response left out marked held where `benchmark_slug` holds it). Raises ImportRejected where the
    upload cannot be read at all, or InspectMissing for logs without inspect-ai."""
    from evalhub.catalog import inspect_logs

    try:
        with uploaded_logs(filename, data) as logs:
            if logs is None:
                fmt, data = format_and_data(filename, data)
                return fmt, _marked_held(preview_score_rows(score_rows(data, fmt), PREVIEW_ROWS), benchmark_slug)
            with contextlib.closing(inspect_logs.LogRows(logs)) as rows:
                shown = preview_score_rows(rows, PREVIEW_ROWS)
                places = rows.places_of(row.line for row in shown)
            return INSPECT_LOGS, [replace(row, place=places.get(row.line, "")) for row in shown]
    except FileError as error:
        raise ImportRejected([RowError(error.line, str(error))]) from None


def _marked_held(shown: list[ScorePreviewRow], benchmark_slug: str) -> list[ScorePreviewRow]:
    """Each row whose response is left out, marked where the benchmark holds it (one question for them all)."""
    left_out = {
        row.line: (row.record.prompt_id, row.record.model, row.record.variant)
        for row in shown
        if row.record is not None and row.values.get("response") is None
    }
    holds = set(held_responses(benchmark_slug)(set(left_out.values())))
    return [replace(row, held=left_out.get(row.line) in holds) for row in shown]


def shown_score_cells(row: ScorePreviewRow) -> list[str]:
    """A previewed row's cells as the page shows them: prompt, model, response, rater, kind, criterion,
    score and reason, as the import reads them where the row passed its checks, as written otherwise."""
    values, record = row.values, row.record
    response = shown_response(values.get("response"), checked=record is not None, held=row.held)
    if record is None:
        kind, criterion, score = values.get("rater_kind"), values.get("criterion"), values.get("score")
    else:
        kind, criterion, score = ("human" if record.rater_is_human else "model"), record.criterion, f"{record.score:g}"
    cells = (values.get("prompt_id"), values.get("model"), response, values.get("rater"), kind, criterion, score)
    return [cut("" if cell is None else str(cell)) for cell in (*cells, values.get("rationale"))]
