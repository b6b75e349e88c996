"""A Parquet file read a batch of rows at a time: the rows a whole-file read gives, from bytes, a file
or a stream that cannot seek, in memory that does not grow with the file."""

from __future__ import annotations

import gzip
import io
import tracemalloc

import pandas as pd
import pytest

from evalhub.core.files import rows as rows_module
from evalhub.core.files.rows import read_rows, unpacked_stream


def parquet(frame: pd.DataFrame, **options) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, **options)
    return buffer.getvalue()


def read(source) -> list:
    return list(read_rows(source, "parquet", check_header=lambda columns: None, nested=("metadata",)))


FRAME = pd.DataFrame(
    {
        "prompt_id": [f"q{n}" for n in range(25)],
        "prompt": [f"Question {n}?" for n in range(25)],
        "score": [n / 4 for n in range(25)],
        "metadata": [{"n": n, "tags": ["a", "b"][: n % 3]} for n in range(25)],
    }
)


@pytest.mark.parametrize("batch", [1, 7, 10_000])
def test_rows_read_a_batch_at_a_time_are_the_whole_files_rows(monkeypatch, batch):
    monkeypatch.setattr(rows_module, "PARQUET_BATCH", batch)
    data = parquet(FRAME, row_group_size=10)  # row groups and batches of other sizes
    expected = [
        {"prompt_id": f"q{n}", "prompt": f"Question {n}?", "score": n / 4, "metadata.n": n, "metadata.tags": t}
        for n, t in ((n, ["a", "b"][: n % 3]) for n in range(25))
    ]
    assert [row for _, row in read(data)] == expected
    assert [number for number, _ in read(data)] == list(range(1, 26))


def test_a_gzipped_stream_that_cannot_seek_reads_as_its_bytes_do(tmp_path):
    data = parquet(FRAME)
    name, stream = unpacked_stream("f.parquet.gz", io.BytesIO(gzip.compress(data)), limit=10**9)
    assert name == "f.parquet" and not stream.seekable()
    assert read(stream) == read(data)


def test_an_integer_column_with_empty_cells_stays_integers():
    """pandas read it as floats (7.0): an integer prompt id with a gap elsewhere became 'a number'."""
    frame = pd.DataFrame({"prompt_id": pd.array([7, None, 9], dtype="Int64"), "prompt": ["a", "b", "c"]})
    assert [row["prompt_id"] for _, row in read(parquet(frame))] == [7, None, 9]


def test_reading_keeps_a_batch_of_rows_in_memory_not_the_file(monkeypatch):
    """The whole file as a pandas frame and its records: about 310 bytes a row by tracemalloc."""
    monkeypatch.setattr(rows_module, "PARQUET_BATCH", 2_000, raising=False)  # the old code had none

    def peak(count: int) -> int:
        frame = pd.DataFrame({"prompt_id": [f"q{n}" for n in range(count)], "prompt": ["Why?"] * count})
        data = parquet(frame)
        tracemalloc.start()
        try:
            for _ in read_rows(data, "parquet", check_header=lambda columns: None):
                pass
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    per_row = (peak(80_000) - peak(20_000)) / 60_000
    assert per_row < 32, f"{per_row:.0f} bytes a row"
