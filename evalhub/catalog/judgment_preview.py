"""What an import would read from a judgment file's first rows, shown before anything is written: the
layout found, each row as a judgment (names made slugs, a study's verdicts mapped), and each row's own
problems. The same readers as the import (evalhub.core.files), stopped after a few rows."""

from __future__ import annotations

import itertools
from dataclasses import replace

from django.conf import settings

from evalhub.catalog.actions.importing import ImportRejected, format_and_data
from evalhub.core.files.judgments import GENERIC, PreviewRow, empty_answers, no_duplicate_columns, preview_rows
from evalhub.core.files.rows import FileError, RowError, Source, read_rows
from evalhub.core.files.study import StudyRows

PREVIEW_ROWS = 10


def preview_judgment_file(
    filename: str, data: Source, *, layout: str = "auto", judges_are: str = "auto"
) -> tuple[str, list[PreviewRow]]:
    """(layout, the first PREVIEW_ROWS rows as the import reads them). Raises ImportRejected where the
    file cannot be read at all (its type, a study.json that cannot be followed)."""
    try:
        if filename.lower().endswith(".zip"):
            with StudyRows(data, limit=settings.EVALHUB_MAX_IMPORT_BYTES) as study:
                layout, shown = preview_rows(itertools.islice(study, PREVIEW_ROWS), layout=GENERIC)
                places = study.places_of(row.line for row in shown)
                return "study", [replace(row, place=places.get(row.line, "")) for row in shown]
        fmt, data = format_and_data(filename, data)
        rows = read_rows(data, fmt, check_header=no_duplicate_columns)
        if fmt == "csv":  # as the import reads it: an empty response cell is an empty answer
            rows = ((line, row if isinstance(row, str) else empty_answers(row)) for line, row in rows)
        return preview_rows(itertools.islice(rows, PREVIEW_ROWS), layout=layout, judges_are=judges_are)
    except FileError as error:
        raise ImportRejected([RowError(error.line, str(error))]) from None


PREVIEW_COLUMNS = ("prompt_id", "model_a", "model_b", "response_a", "response_b", "judge", "judge_kind", "winner")
SHOWN_CHARACTERS = 60


def shown_cells(row: PreviewRow) -> list[str]:
    """A previewed row's cells as the page shows them: a response left out is the benchmark's, one given
    empty an empty answer, long text cut; a name made a slug shows the name it was made from."""
    names = row.values.get("names") or {}
    cells = []
    for column in PREVIEW_COLUMNS:
        value = row.values.get(column)
        if column.startswith("response_"):
            text = "(the benchmark's)" if value is None else "(empty answer)" if value == "" else str(value)
        else:
            text = "" if value is None else str(value)
            if text in names and names[text] != text:
                text = f"{text} ({names[text]})"
        cells.append(text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 1] + "…")
    return cells
