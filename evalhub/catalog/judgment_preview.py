"""What an import would read from a judgment file's first rows, shown before anything is written: the
layout found, each row as a judgment (names made slugs, a study's verdicts mapped), and each row's own
problems. The same readers as the import (evalhub.core.files), stopped after a few rows."""

from __future__ import annotations

import itertools
from dataclasses import replace

from django.conf import settings

from evalhub.catalog.actions.importing import ImportRejected, format_and_data, held_responses
from evalhub.core.files.judgments import GENERIC, PreviewRow, judgment_rows, preview_rows
from evalhub.core.files.responses_seen import HeldResponses
from evalhub.core.files.rows import FileError, RowError, Source
from evalhub.core.files.study import StudyRows

PREVIEW_ROWS = 10


def preview_judgment_file(
    filename: str, data: Source, *, layout: str = "auto", judges_are: str = "auto", benchmark_slug: str = ""
) -> tuple[str, list[PreviewRow]]:
    """(layout, the first PREVIEW_ROWS rows as the import reads them, each response left out marked held
    where `benchmark_slug` holds it). Raises ImportRejected where the file cannot be read at all (its
    type, a study.json that cannot be followed)."""
    try:
        if filename.lower().endswith(".zip"):
            with StudyRows(data, limit=settings.EVALHUB_MAX_IMPORT_BYTES) as study:
                _, shown = preview_rows(itertools.islice(study, PREVIEW_ROWS), layout=GENERIC)
                places = study.places_of(row.line for row in shown)
                layout, shown = "study", [replace(row, place=places.get(row.line, "")) for row in shown]
        else:
            fmt, data = format_and_data(filename, data)
            rows = itertools.islice(judgment_rows(data, fmt), PREVIEW_ROWS)
            layout, shown = preview_rows(rows, layout=layout, judges_are=judges_are)
    except FileError as error:
        raise ImportRejected([RowError(error.line, str(error))]) from None
    return layout, _marked_held(shown, held_responses(benchmark_slug))


def _marked_held(shown: list[PreviewRow], held: HeldResponses) -> list[PreviewRow]:
    """Each row with the responses it leaves out that the benchmark holds (one question for them all)."""
    left_out = {row.line: _left_out(row) for row in shown}
    holds = set(held({key for keys in left_out.values() for key in keys.values()}))
    return [replace(row, held=frozenset(c for c, key in left_out[row.line].items() if key in holds)) for row in shown]


def _left_out(row: PreviewRow) -> dict[str, tuple[str, str, str]]:
    """The response columns the row leaves out, with the (prompt, model, variant) each names."""
    record = row.record
    if record is None:
        return {}
    sides = {"response_a": (record.model_a, record.variant_a), "response_b": (record.model_b, record.variant_b)}
    return {
        column: (record.prompt_id, model, variant)
        for column, (model, variant) in sides.items()
        if row.values.get(column) is None
    }


PREVIEW_COLUMNS = (
    "prompt_id",
    "model_a",
    "model_b",
    "response_a",
    "response_b",
    "judge",
    "judge_kind",
    "winner",
    "rationale",
)
PREVIEW_HEADERS = ("Prompt", "Model A", "Model B", "Response A", "Response B", "Judge", "Kind", "Winner", "Reason")
SHOWN_CHARACTERS = 60


def shown_cells(row: PreviewRow) -> list[str]:
    """A previewed row's cells as the page shows them: a response left out is the benchmark's where it
    holds one, one given empty an empty answer, long text cut; a name made a slug shows the name it was
    made from."""
    names = row.values.get("names") or {}
    cells = []
    for column in PREVIEW_COLUMNS:
        value = row.values.get(column)
        if column.startswith("response_"):
            text = shown_response(value, checked=row.record is not None, held=column in row.held)
        else:
            text = "" if value is None else str(value)
            if text in names and names[text] != text:
                text = f"{text} ({names[text]})"
        cells.append(cut(text))
    return cells


def shown_response(value: object, *, checked: bool, held: bool) -> str:
    """A previewed response cell: one left out is the benchmark's where it holds one (asked only of a row
    that passed its own checks), one given empty an empty answer."""
    if value is None and not checked:
        return "(not given)"
    if value is None:
        return "(not given: the benchmark's)" if held else "(not given; the benchmark holds none)"
    return "(empty answer)" if value == "" else str(value)


def cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 1] + "…"
