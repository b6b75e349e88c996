"""Flat tables of records: the one shape shared by imports and exports.

Nested objects become dotted columns (`privileged.hint`), so a JSONL line with
`{"privileged": {"hint": "…"}}` and a CSV column `privileged.hint` mean the same thing,
and whatever evalhub exports it can import again.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TextIO


def flatten(record: Mapping[str, Any], nested: Iterable[str]) -> dict[str, Any]:
    """Spread the mappings under the keys in `nested` into dotted keys; keep the rest."""
    nested = set(nested)
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if key in nested and isinstance(value, Mapping):
            for inner, inner_value in value.items():
                flat[f"{key}.{inner}"] = inner_value
        else:
            flat[key] = value
    return flat


def columns_of(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every key of every row, in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


# A spreadsheet runs a cell that starts with one of = + - @ tab or CR as a formula (CSV injection,
# e.g. a model answering `=HYPERLINK(...)`). Such text cells are written with a leading apostrophe,
# which spreadsheets show as "text as typed". Cells already starting with apostrophes before such a
# character get one more, so that reading strips exactly one and every export imports back unchanged.
_FORMULA_START = re.compile(r"'*[=+\-@\t\r]")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")  # -0.5 is a number, not a formula


def _runs_as_formula(text: str) -> bool:
    return _FORMULA_START.match(text) is not None and _PLAIN_NUMBER.fullmatch(text) is None


def spreadsheet_safe(text: str) -> str:
    """A CSV cell no spreadsheet runs as a formula; `from_spreadsheet_safe` undoes it exactly."""
    return "'" + text if _runs_as_formula(text) else text


def from_spreadsheet_safe(cell: str) -> str:
    return cell[1:] if cell.startswith("'") and _runs_as_formula(cell[1:]) else cell


def csv_records(text: str | Iterable[str]) -> Iterator[tuple[int, list[str] | str]]:
    """(line, cells) for every non-blank CSV record, the header first, where `line` is the physical
    line the record starts on (quoted cells may span lines). A record the csv module cannot read
    yields (line, reason) and ends the file."""
    # strict: by default the csv module reads an unclosed quote to the end of the file (swallowing
    # every later row into one cell) and drops text after a closing quote, both without a word.
    reader = csv.reader(io.StringIO(text, newline="") if isinstance(text, str) else text, strict=True)
    start = 1
    try:  # one try around the loop: a per-record try/next() cost a third of the read time on large files
        for cells in reader:
            joined = "".join(cells)  # one C-level pass answers "blank?" and "any apostrophe?" for the row
            if joined.strip():
                # Only apostrophe cells can be escaped ones: the check stays off the common path.
                if "'" in joined:
                    cells = [from_spreadsheet_safe(cell) if cell[:1] == "'" else cell for cell in cells]
                yield start, cells
            start = reader.line_num + 1  # the next record starts after this one's last physical line
    except csv.Error as error:
        yield start, _CSV_ERRORS.get(str(error), str(error))


_CSV_ERRORS = {
    "unexpected end of data": "a quoted cell starts on this line and is never closed",
    "',' expected after '\"'": 'text after the closing quote of a cell (double a quote inside a quoted cell: "")',
}


def write_jsonl(rows: Iterable[Mapping[str, Any]], stream: TextIO) -> int:
    count = 0
    for row in rows:
        stream.write(json.dumps(row, ensure_ascii=False, default=_plain))
        stream.write("\n")
        count += 1
    return count


def write_csv(rows: Sequence[Mapping[str, Any]], stream: TextIO, columns: list[str] | None = None) -> int:
    """Write rows as CSV (the header is `columns`, or every key seen); values that are not text are
    written as JSON, and no cell can run as a spreadsheet formula."""
    # CRLF, as RFC 4180 says: with "\n" alone the csv module left a bare CR in a cell unquoted, and
    # every reader split the row there.
    writer = csv.DictWriter(stream, fieldnames=columns or columns_of(rows), extrasaction="raise", lineterminator="\r\n")
    writer.writerow({name: spreadsheet_safe(name) for name in writer.fieldnames})
    for row in rows:
        writer.writerow({key: _csv_cell(value) for key, value in row.items()})
    return len(rows)


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return spreadsheet_safe(value)
    if isinstance(value, datetime.date):  # a time as ISO 8601, not JSON's quoted str() of it
        return value.isoformat()
    return spreadsheet_safe(json.dumps(value, ensure_ascii=False, default=_plain))


def _plain(value: Any) -> str:
    """What JSON cannot write, as text: a time as ISO 8601, anything else as str() says."""
    return value.isoformat() if isinstance(value, datetime.date) else str(value)


def to_text(rows: Sequence[Mapping[str, Any]], fmt: str, columns: list[str] | None = None) -> str:
    buffer = io.StringIO()
    if fmt == "csv":
        write_csv(rows, buffer, columns)
    else:
        {"jsonl": write_jsonl}[fmt](rows, buffer)
    return buffer.getvalue()


def readable(value: Any) -> list[tuple[str, str]]:
    """A stored configuration or audit detail as (label, text) lines a person reads: keys with
    spaces, yes/no for booleans, '—' for nothing, lists joined, nested mappings as 'key: value'
    (pages printed raw Python such as {'swapped': False} and [None, ''])."""
    if not isinstance(value, Mapping):
        return [("", _readable_value(value))]
    return [(str(key).replace("_", " "), _readable_value(inner)) for key, inner in value.items()]


def _readable_value(value: Any) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return (
            "; ".join(f"{str(key).replace('_', ' ')}: {_readable_value(inner)}" for key, inner in value.items()) or "—"
        )
    if isinstance(value, (list, tuple, set)):
        return ", ".join(_readable_value(inner) for inner in value) or "—"
    return str(value)
