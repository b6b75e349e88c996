"""Property-based checks of the import schema: whatever a file holds, the reader either names a
line and a reason, or returns records that every database evalhub runs on can store."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalhub.core.files.benchmarks import NESTED, PROMPT_TEXT_FIELDS, ParsedFile, parse_benchmark_file
from evalhub.core.files.rows import MAX_DEPTH
from evalhub.core.files.tables import from_spreadsheet_safe

MODELS = {"alpha", "beta"}
PROPERTIES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Any code point, lone surrogates and NUL included: exactly what a file can smuggle in.
any_text = st.text(alphabet=st.characters(codec=None, min_codepoint=0), max_size=12)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**120), max_value=10**120),
    st.floats(allow_nan=True, allow_infinity=True),
    any_text,
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=12,
)
# Shaped like the schema, so most rows get past the required fields to the values that matter.
rows = st.fixed_dictionaries(
    {
        "prompt_id": st.one_of(st.integers(min_value=-(10**120), max_value=10**120), any_text),
        "prompt": any_text.filter(str.strip),
    },
    optional={
        **{name: st.one_of(any_text, json_values) for name in PROMPT_TEXT_FIELDS if name != "prompt"},
        "model": st.sampled_from(sorted(MODELS)),
        "response": any_text,
        **{f"{prefix}.x": json_values for prefix in NESTED},
        **{prefix: st.dictionaries(any_text, json_values, max_size=3) for prefix in NESTED},
    },
)


def storable(parsed: ParsedFile) -> None:
    """What the database layer needs: UTF-8 text without NUL, and JSON without NaN that PostgreSQL's jsonb takes."""
    for record in [*parsed.prompts, *parsed.responses]:
        names = getattr(record, "__struct_fields__", None) or [item.name for item in dataclasses.fields(record)]
        for value in (getattr(record, name) for name in names):  # a response is a msgspec Struct
            if isinstance(value, str):
                assert "\x00" not in value
                value.encode("utf-8")
            elif isinstance(value, dict):
                text = json.dumps(value, allow_nan=False, ensure_ascii=False)
                assert "\\u0000" not in text
                text.encode("utf-8")


def every_error_names_a_line(parsed: ParsedFile, lines: int) -> None:
    for error in parsed.errors:
        assert error.line is None or 1 <= error.line <= lines, str(error)
        assert str(error).strip()


@PROPERTIES
@given(st.lists(rows, min_size=1, max_size=3, unique_by=lambda row: str(row["prompt_id"]).strip()))
def test_any_jsonl_file_is_either_refused_by_line_or_parsed_into_storable_records(file_rows):
    # ensure_ascii escapes lone surrogates and NaN is written as the non-standard token a user's tool might emit.
    data = "\n".join(json.dumps(row, ensure_ascii=True, allow_nan=True) for row in file_rows).encode()
    parsed = parse_benchmark_file(data, "jsonl", known_models=MODELS, allow_new_models=True)
    every_error_names_a_line(parsed, len(file_rows))
    if parsed.ok:
        storable(parsed)


@PROPERTIES
@given(st.integers(min_value=1, max_value=3000))
def test_nesting_of_any_depth_is_refused_by_line_or_parsed(depth):
    data = b'{"prompt_id": "q", "prompt": "p", "metadata": {"a": ' + b"[" * depth + b"]" * depth + b"}}"
    parsed = parse_benchmark_file(data, "jsonl", known_models=MODELS)
    every_error_names_a_line(parsed, 1)
    assert parsed.ok == (depth <= MAX_DEPTH)


csv_cells = st.text(alphabet=st.characters(codec="utf-8", min_codepoint=0), max_size=20)


@PROPERTIES
@given(st.lists(st.tuples(csv_cells, csv_cells), min_size=1, max_size=5))
def test_a_csv_written_by_any_spreadsheet_reads_back_cell_for_cell_or_names_a_line(cells):
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(["prompt_id", "prompt"])
    prompt_ids = [f"q{index}" for index in range(len(cells))]
    for prompt_id, (prompt, _) in zip(prompt_ids, cells, strict=True):
        writer.writerow([prompt_id, prompt])
    data = buffer.getvalue().encode("utf-8")
    parsed = parse_benchmark_file(data, "csv", known_models=MODELS)
    every_error_names_a_line(parsed, data.count(b"\n") + data.count(b"\r") + 1)  # a bare CR ends a line too
    if parsed.ok:
        storable(parsed)
        # A cell with an apostrophe before = + - @ tab or CR reads without it: the escape evalhub's own CSV
        # exports write against spreadsheet formulas (test_tables), which must import back unchanged.
        written: dict[str, Any] = {
            prompt_id: from_spreadsheet_safe(prompt) for prompt_id, (prompt, _) in zip(prompt_ids, cells, strict=True)
        }
        assert {record.external_id: record.text for record in parsed.prompts} == written, "no cell lost or merged"
