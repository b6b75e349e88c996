"""CSV written by evalhub: no cell runs as a spreadsheet formula, and every export reads back unchanged."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalhub.core.files.tables import csv_records, from_spreadsheet_safe, spreadsheet_safe, to_text

HOSTILE = ['=HYPERLINK("http://evil.example","click")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tx", "\rx", "- a bullet"]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_cell_a_spreadsheet_would_run_is_written_as_text(text):
    cells = list(csv.reader(io.StringIO(to_text([{"response": text}], "csv"), newline="")))
    assert cells == [["response"], ["'" + text]]


@pytest.mark.parametrize("value", ["-0.5", "+3", "-1e-5", -0.5, 12, "plain text", "", "'quoted", "a=b"])
def test_numbers_and_ordinary_text_are_written_as_they_are(value):
    cells = list(csv.reader(io.StringIO(to_text([{"x": value}], "csv"), newline="")))
    assert cells[1] == [str(value)]


def test_a_hostile_column_name_is_neutralised_too():
    cells = list(csv.reader(io.StringIO(to_text([{"=cmd|' /C calc'!A0": 1}], "csv"), newline="")))
    assert cells[0] == ["'=cmd|' /C calc'!A0"]


@given(st.text(max_size=20))
def test_reading_back_undoes_the_escape_exactly_for_any_text(text):
    assert from_spreadsheet_safe(spreadsheet_safe(text)) == text
    escaped = spreadsheet_safe(text)
    assert escaped[:1] not in ("=", "@", "\t", "\r"), "a formula start is escaped"
    if escaped[:1] in ("+", "-"):
        float(escaped)  # only a plain number keeps its sign in front


@pytest.mark.parametrize("text", [*HOSTILE, "'=already quoted", "''-x", "'-3"])
def test_a_csv_export_reads_back_to_the_same_text(text):
    body = to_text([{"prompt_id": "q1", "prompt": text}], "csv")
    records = list(csv_records(body))
    assert records[1][1] == ["q1", text]


def test_a_stored_configuration_reads_as_labelled_lines_not_python():
    from evalhub.core.files.tables import readable

    lines = readable({"swapped": False, "agents": [None, ""], "privileged_sources": [], "seed": 3, "k": {"a_b": True}})
    assert lines == [
        ("swapped", "no"),
        ("agents", "—, —"),
        ("privileged sources", "—"),
        ("seed", "3"),
        ("k", "a b: yes"),
    ]
    assert readable(None) == [("", "—")]


def test_a_time_is_written_as_iso_8601_in_csv_and_jsonl():
    import datetime
    import json

    from evalhub.core.files.tables import to_text

    when = datetime.datetime(2026, 12, 5, 0, 54, 45, 489171, tzinfo=datetime.UTC)
    rows = [{"created": when, "nested": {"at": when}}]
    csv_text = to_text(rows, "csv")
    assert csv_text.splitlines()[1].startswith("2026-12-05T00:54:45.489171+00:00,"), csv_text
    assert json.loads(to_text(rows, "jsonl"))["nested"]["at"] == "2026-12-05T00:54:45.489171+00:00"
