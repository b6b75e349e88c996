"""A .json file's one array read a record at a time gives what json.loads of the whole file gives: the
same records, and where the file is broken the same error at the same line and column."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalhub.core.files import json_array
from evalhub.core.files.rows import read_rows

PROPERTIES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
)
arrays = st.lists(st.one_of(st.dictionaries(st.text(max_size=4), values, max_size=4), values), max_size=6)
layouts = st.sampled_from([{}, {"indent": 0}, {"indent": 2}, {"separators": (",", ":")}, {"ensure_ascii": False}])


def read(text: bytes) -> tuple[list, json.JSONDecodeError | None]:
    out: list = []
    try:
        for value in json_array.records(io.BytesIO(text), parse_constant=float, parse_int=int):
            out.append(value)
    except json.JSONDecodeError as error:
        return out, error
    return out, None


@PROPERTIES
@given(arrays, layouts, st.integers(min_value=1, max_value=9))
def test_a_valid_array_reads_as_json_loads_reads_it_whatever_the_chunk(monkeypatch, array, layout, chunk):
    monkeypatch.setattr(json_array, "CHUNK", chunk)
    text = json.dumps(array, **layout).encode()
    assert read(text) == (json.loads(text), None)


@PROPERTIES
@given(arrays, layouts, st.integers(min_value=1, max_value=9), st.data())
def test_a_broken_array_fails_where_json_loads_fails(monkeypatch, array, layout, chunk, data):
    """One character dropped, doubled or changed anywhere: json.loads's verdict, its message and place."""
    monkeypatch.setattr(json_array, "CHUNK", chunk)
    text = json.dumps(array, **layout)
    at = data.draw(st.integers(min_value=0, max_value=len(text)))
    edit = data.draw(st.sampled_from(["drop", "double", "replace"]))
    other = data.draw(st.sampled_from(list('[]{},:"\\ 0e-.tnx\n')))
    broken = {
        "drop": text[:at] + text[at + 1 :],
        "double": text[:at] + text[at : at + 1] * 2 + text[at + 1 :],
        "replace": text[:at] + other + text[at + 1 :],
    }[edit]
    try:
        expected = json.loads(broken, parse_constant=float)
    except json.JSONDecodeError as error:
        records, failure = _read_or_not_an_array(broken.encode())
        assert failure is not None, f"read {records!r} from {broken!r}"
        assert (failure.msg, failure.lineno, failure.colno) == (error.msg, error.lineno, error.colno), broken
        return
    records, failure = _read_or_not_an_array(broken.encode())
    assert failure is None
    assert records == expected


def _read_or_not_an_array(text: bytes) -> tuple:
    try:
        return read(text)
    except json_array.NotAnArray as not_an_array:
        return not_an_array.value, None


@pytest.mark.parametrize("chunk", [1, 2, 3, 1 << 20])
def test_bytes_that_are_not_utf8_are_placed_by_their_offset_in_the_file_and_line(monkeypatch, chunk):
    """As the JSONL reader places them: the offset counts the byte order mark (decoding the whole file
    with utf-8-sig, as before, counted from after it)."""
    monkeypatch.setattr(json_array, "CHUNK", chunk)
    text = b'\xef\xbb\xbf[{"a": "\xc3\xa9"},\n {"b": "\xe2\x82"}]'  # a BOM, an e-acute, a cut euro sign
    with pytest.raises(json_array.BadBytes) as streamed:
        read(text)
    assert (streamed.value.offset, streamed.value.byte, streamed.value.line) == (text.index(b"\xe2"), 0xE2, 2)


def test_a_file_that_is_not_one_array_is_named_by_its_type():
    rows = read_rows(b'{"prompt_id": "q1"}', "json", check_header=lambda columns: None)
    with pytest.raises(Exception, match=r"must be one array of records, not dict"):
        list(rows)


def test_records_of_a_long_array_are_given_before_the_file_is_read_to_its_end(monkeypatch):
    """The window holds about a chunk and a record: the first records come while most of the file is unread."""
    monkeypatch.setattr(json_array, "CHUNK", 64)
    stream = io.BytesIO(json.dumps([{"n": n, "text": "x" * 20} for n in range(10_000)]).encode())
    records = json_array.records(stream, parse_constant=float, parse_int=int)
    assert [next(records)["n"] for _ in range(3)] == [0, 1, 2]
    assert stream.tell() < 1024
