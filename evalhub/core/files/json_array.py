"""A `.json` file that is one array of records (AlpacaEval's annotations.json), read a record at a time.

`json.loads` of the whole file held the text and every record at once: gigabytes at a million records.
Here the standard library's own decoder (`JSONDecoder.raw_decode`, with the caller's hooks) decodes one
element at a time from a window of the file, read CHUNK bytes at a time, so that values, hooks and
error messages (with the line and column in the whole file) are the ones `json.loads` gives. ijson
was weighed: its C backend refuses integers past 64 bits, which the other readers take up to
`rows.MAX_INT_DIGITS` digits."""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from typing import IO, Any

CHUNK = 1 << 20  # bytes read at a time
_SPACE = " \t\n\r"  # JSON's whitespace
_NUMBER_STARTS = frozenset("-0123456789")
_NUMBER_GOES_ON = frozenset("0123456789.eE+-")


class NotAnArray(Exception):  # noqa: N818 - a finding about the file, not a failure
    """The file's value is not an array; `value` is the whole of it (a file refused anyway)."""

    def __init__(self, value: Any) -> None:
        super().__init__(type(value).__name__)
        self.value = value


class BadBytes(Exception):  # noqa: N818
    """The file is not UTF-8 here: `offset` in the file's bytes, on line `line`."""

    def __init__(self, byte: int, offset: int, line: int) -> None:
        super().__init__(f"byte 0x{byte:02x} at offset {offset}")
        self.byte, self.offset, self.line = byte, offset, line


class _Window:
    """The file's text from `start` on, decoded as it is read; `lines` and `column` place its start."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.text = ""
        self.ended = False
        self.lines = 0  # line ends before the window
        self.column = 0  # characters on the window's first line before it
        self.bytes_read = 0
        self.newlines_read = 0  # in the bytes decoded so far

    def more(self) -> bool:
        """Read on; False at the end of the file."""
        if self.ended:
            return False
        data = self.stream.read(max(CHUNK, len(self.text)))  # a long record: read in growing steps, not quadratic
        try:
            self.text += self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as error:
            # The decoder's bytes start with those of a character the last read cut (no line end among them).
            kept = len(error.object) - len(data)
            raise BadBytes(
                error.object[error.start],
                self.bytes_read - kept + error.start,
                self.newlines_read + error.object.count(b"\n", 0, error.start) + 1,
            ) from None
        self.bytes_read += len(data)
        self.newlines_read += data.count(b"\n")
        self.ended = not data
        return True

    def drop(self, upto: int) -> None:
        """Forget the text before `upto` (read already), keeping where the rest starts."""
        gone = self.text[:upto]
        last = gone.rfind("\n")
        if last >= 0:
            self.lines += gone.count("\n")
            self.column = len(gone) - last - 1
        else:
            self.column += len(gone)
        self.text = self.text[upto:]

    def error(self, error: json.JSONDecodeError) -> json.JSONDecodeError:
        """The error placed in the whole file, as json.loads of it would place it."""
        placed = json.JSONDecodeError(error.msg, error.doc, error.pos)
        placed.lineno = error.lineno + self.lines
        placed.colno = error.colno + (self.column if error.lineno == 1 else 0)
        return placed

    def skip_space(self, at: int) -> int:
        """The first non-space at or after `at`, reading on as needed (len(text) at the end)."""
        while True:
            while at < len(self.text) and self.text[at] in _SPACE:
                at += 1
            if at < len(self.text) or not self.more():
                return at


def records(
    stream: IO[bytes], *, parse_constant: Callable[[str], Any], parse_int: Callable[[str], Any]
) -> Iterator[Any]:
    """Each element of the file's one array, in order. Raises json.JSONDecodeError where json.loads of the
    whole file would (once the elements before it were given), NotAnArray, BadBytes, or what a hook raises."""
    decode = json.JSONDecoder(parse_constant=parse_constant, parse_int=parse_int).raw_decode
    window = _Window(stream)
    at = window.skip_space(0)
    if window.text[at : at + 1] != "[":  # an object or a scalar: read whole, to be named or to fail as json.loads does
        while window.more():
            pass
        raise NotAnArray(json.loads(window.text, parse_constant=parse_constant, parse_int=parse_int))
    at = window.skip_space(at + 1)
    if window.text[at : at + 1] == "]":
        _check_end(window, at + 1)
        return
    while True:
        value, at = _element(window, decode, at)
        yield value
        at = window.skip_space(at)
        separator = window.text[at : at + 1]
        if separator == "]":
            _check_end(window, at + 1)
            return
        if separator != ",":
            raise window.error(json.JSONDecodeError("Expecting ',' delimiter", window.text, at))
        at = window.skip_space(at + 1)
        if at > CHUNK:  # what was read already goes: the window holds about one chunk and one record
            window.drop(at)
            at = 0


def _element(window: _Window, decode: Callable[[str, int], tuple[Any, int]], at: int) -> tuple[Any, int]:
    """The element starting at `at` and where it ends: read on while it may not be whole yet (an error
    where the text read so far ends, or a number the text read so far may cut)."""
    while True:
        try:
            value, end = decode(window.text, at)
        except json.JSONDecodeError as error:
            if _cut_short(error, len(window.text)) and window.more():
                continue
            raise window.error(error) from None
        # A number may go on past the text read so far ("-0" of "-0.5e3"): whole only once a character
        # that cannot be its own follows, or at the file's end.
        a_number = window.text[at] in _NUMBER_STARTS
        if (end < len(window.text) and not (a_number and window.text[end] in _NUMBER_GOES_ON)) or not window.more():
            return value, end


def _cut_short(error: json.JSONDecodeError, read: int) -> bool:
    """Whether the decoder may have failed only because the text read so far ends: it stopped within
    the longest token from the end (`\\uXXXX`, `false`), or in a string (which ends only at its quote)."""
    return error.pos >= read - 6 or error.msg.startswith("Unterminated string")


def _check_end(window: _Window, at: int) -> None:
    at = window.skip_space(at)
    if at < len(window.text):
        raise window.error(json.JSONDecodeError("Extra data", window.text, at))
