"""Reading a row file (JSONL, one JSON array, CSV, Parquet; each also gzipped) one row at a time, for
every import schema (benchmarks, judgments, scores): a row is a flat dict (nested objects spread into
dotted columns) or the reason it cannot be read, numbered as the user sees it. Also the checks that a
value can be stored at all (PostgreSQL refuses NUL, deep nesting, huge integers)."""

from __future__ import annotations

import codecs
import contextlib
import gzip
import io
import json
import math
import re
import shutil
import tempfile
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import IO, Any

from evalhub.core.files import json_array
from evalhub.core.files.tables import csv_records, flatten

# `.json` is one JSON array of records (AlpacaEval's annotations.json and model_outputs.json are).
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


UNITS = {"parquet": "row", "json": "record"}  # what an error's number counts; "line" otherwise


def unit_of(fmt: str) -> str:
    return UNITS.get(fmt, "line")


# Metadata deeper than this is refused by name: PostgreSQL's and the JSON encoder's own limits
# (stack depth, recursion) would otherwise fail the write with a traceback instead of a line number.
MAX_DEPTH = 32


# A JSON integer longer than this is an id written as a number, or garbage; Python refuses to turn
# ints of over 4,300 digits into text at all, which crashed the read.
MAX_INT_DIGITS = 100


@dataclass(frozen=True)
class RowError:
    """A problem with one row (`line` set) or with the whole file (`line` None)."""

    line: int | None
    message: str
    unit: str = "line"
    place: str = ""  # where a row is better named than by its number (an Inspect log's file and sample id)

    def __str__(self) -> str:
        if self.place:
            return f"{self.place}: {self.message}"
        return f"{self.unit} {self.line}: {self.message}" if self.line is not None else self.message


# A file's bytes, or the file itself (a binary stream at its start): CSV and JSONL are then read a line
# at a time, so that a file of ten million rows is never in memory whole (a JSON array a record at a
# time, a Parquet file a batch of rows).
Source = bytes | IO[bytes]


class _Unpacking(io.RawIOBase):
    """A gzipped stream's contents, read on demand; past `limit` bytes, or where the gzip stream is
    broken or cut short, a FileError saying so (the bytes version's messages, raised while reading)."""

    def __init__(self, filename: str, stream: IO[bytes], limit: int) -> None:
        self.filename, self.limit, self.given = filename, limit, 0
        self.inner = gzip.GzipFile(fileobj=stream, mode="rb")  # reads every member of a `cat a.gz b.gz`

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            count = self.inner.readinto(buffer)
        except (OSError, EOFError, zlib.error) as error:
            if isinstance(error, EOFError):
                raise FileError(f"{self.filename} ends before its gzip stream does: the file is cut short.") from None
            raise FileError(f"{self.filename} is not a readable gzip file ({error}).") from None
        self.given += count
        if self.given > self.limit:
            raise FileError(
                f"{self.filename} unpacks to over {self.limit / 1e6:.1f} MB, the import limit "
                "(EVALHUB_MAX_IMPORT_BYTES); split it or raise the limit."
            )
        return count


def unpacked_stream(filename: str, stream: IO[bytes], limit: int) -> tuple[str, IO[bytes]]:
    """`unpacked` for a file read as a stream: a gzipped one's contents come as they are read."""
    if PurePath(filename).suffix.lower() != ".gz":
        return filename, stream
    return filename[: -len(".gz")], io.BufferedReader(_Unpacking(filename, stream, limit), buffer_size=1 << 20)


def unpacked(filename: str, data: bytes, limit: int) -> tuple[str, bytes]:
    """A gzipped file (`x.jsonl.gz`, as AlpacaEval ships its annotations) as its name and bytes inside,
    unpacked at most `limit` bytes far (a small file may unpack to gigabytes); any other file as it is.
    The stream's reader (`unpacked_stream`), read to its end: one gzip reader for both."""
    name, stream = unpacked_stream(filename, io.BytesIO(data), limit)
    if name == filename:
        return filename, data
    try:
        return name, stream.read()
    except FileError as error:
        raise ValueError(str(error)) from None


def detect_format(filename: str) -> str:
    suffix = PurePath(filename).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(
            f"unsupported file type {suffix or '(none)'!r}; use .jsonl, .json (one array of records), .csv or "
            ".parquet, each also gzipped (.gz)."
        )
    return FORMATS[suffix]


class FileError(Exception):
    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def read_rows(
    data: Source,
    fmt: str,
    *,
    check_header: Callable[[list[str]], None],
    nested: Collection[str] = (),
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """Yield (line or row number, row dict), or (number, error message) for an unreadable row.

    `check_header` (the schema's) raises FileError for a header that cannot be imported; `nested`
    names the JSONL/Parquet objects spread into dotted columns."""
    check = check_header
    if fmt == "jsonl":
        yield from _read_jsonl(_filled_lines(io.BytesIO(data) if isinstance(data, bytes) else data), nested)
        return
    if fmt == "csv":  # a line at a time, from a stream (bytes read as one)
        yield from _read_csv(_stream_lines(io.BytesIO(data) if isinstance(data, bytes) else data, bare_cr=True), check)
        return
    if fmt == "json":
        yield from _read_json_array(io.BytesIO(data) if isinstance(data, bytes) else data, nested)
        return
    if fmt == "parquet":
        yield from _read_parquet(data, check, nested)
    else:
        raise FileError(f"unknown format {fmt!r}.")


def empty_cells_as_text(
    rows: Iterable[tuple[int, dict[str, Any] | str]], fmt: str, columns: Collection[str]
) -> Iterable[tuple[int, dict[str, Any] | str]]:
    """A CSV's empty cells in `columns` as the empty text they hold: a CSV cell cannot be null, so an empty
    response cell is an empty answer there. Other formats say null themselves and are left as read."""
    if fmt != "csv":
        return rows
    return ((line, row if isinstance(row, str) else empty_text(row, columns)) for line, row in rows)


def empty_text(row: dict[str, Any], columns: Collection[str]) -> dict[str, Any]:
    """`row` with its null cells in `columns` as empty text (the row itself where it has none)."""
    for column in columns:  # a loop, not any(): a generator a row cost ten million rows seconds
        if row.get(column, "") is None:
            return {**row, **{name: "" for name in columns if name in row and row[name] is None}}
    return row


class _Unreadable(ValueError):
    """A JSON value the parser accepts and evalhub cannot store; the message is the user's reason."""


def _no_constant(name: str) -> Any:
    raise _Unreadable(f"{name} is not a JSON value (JSON has no NaN or Infinity); leave it out or write it as text.")


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise _Unreadable(
            f"a number with {len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS}); write long ids as text."
        )
    return int(digits)


_AFTER_BARE_CR = re.compile(rb"(?<=\r)(?!\n)")  # where a line that ends in a lone carriage return ends


def _stream_lines(stream: IO[bytes], *, bare_cr: bool = False) -> Iterator[str]:
    """A binary stream's lines decoded one at a time, each with its line end (as the csv module wants
    them; a cell may hold a line end inside quotes), the byte order mark dropped. `bare_cr`: a lone
    carriage return ends a line too, as in a CSV saved with old Mac line ends (read as text, such files
    always imported)."""
    offset = 0
    for number, piece in enumerate(_split_at_bare_cr(stream) if bare_cr else stream, start=1):
        start = len(codecs.BOM_UTF8) if number == 1 and piece.startswith(codecs.BOM_UTF8) else 0
        try:
            yield piece[start:].decode("utf-8")
        except UnicodeDecodeError as error:
            at = offset + start + error.start
            raise FileError(
                f"the file is not valid UTF-8 (byte 0x{piece[start + error.start]:02x} at offset {at}); "
                "save it as UTF-8 and try again.",
                number,
            ) from None
        offset += len(piece)


def _split_at_bare_cr(stream: IO[bytes]) -> Iterator[bytes]:
    """The stream's lines, a lone carriage return ending one too (a line is split only where it holds one:
    a list made for every line cost 110 ns of its 670)."""
    for raw in stream:
        if b"\r" in raw and not (raw.endswith(b"\r\n") and raw.count(b"\r") == 1):
            yield from (piece for piece in _AFTER_BARE_CR.split(raw) if piece)
        else:
            yield raw


BLOCK = 1 << 20  # bytes read at a time by the JSONL reader
# A line with something on it. Anchored at a line's start, so each line is tried once (unanchored, a
# long run of spaces was tried again from each of its bytes).
_FILLED = re.compile(rb"(?m)^[^\n]*[^\s][^\n]*")


def _filled_lines(stream: IO[bytes]) -> Iterator[tuple[int, str]]:
    """A JSONL stream's lines that hold something, decoded, with their line numbers. Read a block at a
    time and searched for filled lines in C, so a file's cost is its bytes whatever they hold: a gzip of
    blank lines (a million per MB, each a step of a Python loop when read line by line) held a request
    for minutes. A line longer than a block is gathered piece by piece, never copied again per block."""
    number, offset, pieces = 0, 0, []  # lines before the block; its first byte in the file; a pending line
    while block := stream.read(BLOCK):
        end = block.rfind(b"\n") + 1
        if not end:  # no line ends here: all of it belongs to the pending line
            pieces.append(block)
            continue
        body = b"".join((*pieces, block[:end])) if pieces else block[:end]
        pieces = [block[end:]] if end < len(block) else []
        yield from _filled_in(body, number, offset)
        number += body.count(b"\n")
        offset += len(body)
    tail = b"".join(pieces)
    if tail:
        yield from _filled_in(tail, number, offset)


def _filled_in(body: bytes, number: int, offset: int) -> Iterator[tuple[int, str]]:
    at = 0
    for match in _FILLED.finditer(body):
        number += body.count(b"\n", at, match.start())
        at = match.start()
        line = match.group()
        start = len(codecs.BOM_UTF8) if offset == 0 and at == 0 and line.startswith(codecs.BOM_UTF8) else 0
        try:
            text = line[start:].decode("utf-8")
        except UnicodeDecodeError as error:
            raise FileError(
                f"the file is not valid UTF-8 (byte 0x{line[start + error.start]:02x} at offset "
                f"{offset + at + start + error.start}); save it as UTF-8 and try again.",
                number + 1,
            ) from None
        if text.strip():  # a lone byte order mark, or only Unicode spaces (U+3000…), is a blank line too
            yield number + 1, text


def _read_jsonl(
    lines: Iterable[tuple[int, str]], nested: Collection[str]
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    for number, line in lines:
        try:
            value = json.loads(line, parse_constant=_no_constant, parse_int=_bounded_int)
        except json.JSONDecodeError as error:
            yield number, f"not valid JSON ({error.msg} at column {error.colno})."
            continue
        except _Unreadable as error:
            yield number, str(error)
            continue
        except RecursionError:
            yield number, f"the JSON is nested too deeply to read (metadata may be at most {MAX_DEPTH} levels deep)."
            continue
        if not isinstance(value, dict):
            yield number, f"each line must be a JSON object, not {type(value).__name__}."
            continue
        yield number, flatten(value, nested)


def _read_json_array(stream: IO[bytes], nested: Collection[str]) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """A file that is one JSON array of objects, a record at a time (json_array); a record's number is its
    place in the array (from 1). A file that cannot be read on is refused whole (FileError), as a
    JSONL file's broken bytes are."""
    elements = json_array.records(stream, parse_constant=_no_constant, parse_int=_bounded_int)
    try:
        for number, record in enumerate(elements, start=1):
            if isinstance(record, dict):
                yield number, flatten(record, nested)
            else:
                yield number, f"each record must be a JSON object, not {type(record).__name__}."
    except json.JSONDecodeError as error:
        raise FileError(
            f"not valid JSON ({error.msg} at line {error.lineno}, column {error.colno}).", error.lineno
        ) from None
    except _Unreadable as error:
        raise FileError(str(error)) from None
    except RecursionError:
        raise FileError(
            f"the JSON is nested too deeply to read (metadata may be at most {MAX_DEPTH} levels deep)."
        ) from None
    except json_array.NotAnArray as error:
        raise FileError(
            f"a .json file must be one array of records, not {error}; for one record a line, use .jsonl."
        ) from None
    except json_array.BadBytes as error:
        raise FileError(f"the file is not valid UTF-8 ({error}); save it as UTF-8 and try again.", error.line) from None


def _read_csv(
    lines: Iterable[str], check_header: Callable[[list[str]], None]
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    records = csv_records(lines)
    first = next(records, None)
    if first is None:
        return
    if isinstance(first[1], str):
        raise FileError(f"the CSV header cannot be read: {first[1]}.", first[0])
    header = first[1]
    check_header(header)
    for start, cells in records:
        if isinstance(cells, str):
            yield start, f"the CSV cannot be read here: {cells}."
        elif len(cells) != len(header):
            yield start, f"has {len(cells)} cells but the header has {len(header)} columns."
        else:
            yield start, {name: (cell if cell != "" else None) for name, cell in zip(header, cells, strict=True)}


PARQUET_BATCH = 10_000  # rows converted to Python values at a time


def _read_parquet(
    data: Source, check_header: Callable[[list[str]], None], nested: Collection[str]
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """A Parquet file PARQUET_BATCH rows at a time (pyarrow; the whole file as a pandas frame and its
    records held a million rows at once). Values are Arrow's own Python values: an integer column with
    empty cells stays integers (pandas made them floats)."""
    import pyarrow.parquet as pq

    with _seekable(data) as file:
        try:
            parquet = pq.ParquetFile(file)
        except Exception as error:  # pyarrow raises several types for a corrupt file
            raise FileError(f"not a readable Parquet file ({type(error).__name__}: {error}).") from None
        check_header([str(name) for name in parquet.schema_arrow.names])
        number = 0
        batches = parquet.iter_batches(batch_size=PARQUET_BATCH)
        while True:
            try:
                batch = next(batches, None)
            except Exception as error:  # a row group that cannot be read: the file is refused whole
                raise FileError(f"not a readable Parquet file ({type(error).__name__}: {error}).") from None
            if batch is None:
                return
            for record in batch.to_pylist():
                number += 1
                yield number, flatten({str(key): _plain(value) for key, value in record.items()}, nested)


@contextlib.contextmanager
def _seekable(data: Source) -> Iterator[IO[bytes]]:
    """The file as Parquet's reader needs it, seekable: a stream that is not (a gzipped upload unpacked
    as it is read) is copied to a temporary file first, not into memory."""
    if isinstance(data, bytes):
        yield io.BytesIO(data)
        return
    if data.seekable():
        yield data
        return
    with tempfile.TemporaryFile(prefix="evalhub-parquet-") as copy:
        shutil.copyfileobj(data, copy, 1 << 20)
        copy.seek(0)
        yield copy


def _plain(value: Any) -> Any:
    """numpy scalars and arrays to Python values; NaN/NA to None."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, dict):
        return {key: _plain(inner) for key, inner in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is not None and type(value).__name__ in {"NAType", "NaTType"}:
        return None
    return value


def unstorable_text(text: str) -> str | None:
    """Why a string cannot be stored (PostgreSQL text and jsonb refuse NUL; UTF-8 has no lone surrogates)."""
    if "\x00" in text:
        return "contains a NUL character (\\u0000), which cannot be stored; remove it."
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return (
            f"contains a lone surrogate (\\u{ord(text[error.start]):04x} at character {error.start + 1}), "
            "which is not valid Unicode."
        )
    return None


def unstorable_value(path: str, value: Any, depth: int) -> str | None:
    """Why a metadata value cannot be stored as JSON, naming where in it; None when it can."""
    if depth > MAX_DEPTH:
        return f"{path!r} is nested more than {MAX_DEPTH} levels deep."
    if isinstance(value, str):
        problem = unstorable_text(value)
        return f"{path!r} {problem}" if problem else None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path!r} is {value}, not a finite number; leave it out or write it as text."
    if isinstance(value, int) and not isinstance(value, bool) and len(str(abs(value))) > MAX_INT_DIGITS:
        return f"{path!r} is a number with more than {MAX_INT_DIGITS} digits; write it as text."
    if isinstance(value, dict):
        for key, inner in value.items():
            problem = unstorable_text(str(key))
            if problem:
                return f"a key in {path!r} {problem}"
            problem = unstorable_value(f"{path}.{key}", inner, depth + 1)
            if problem:
                return problem
    if isinstance(value, (list, tuple)):
        for index, inner in enumerate(value):
            problem = unstorable_value(f"{path}[{index}]", inner, depth + 1)
            if problem:
                return problem
    return None
